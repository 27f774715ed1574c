// Package lcs computes the line edit script of two texts by longest common
// subsequence.
//
// The diffs shown to reviewers use it.
package lcs

// Op is one step of an edit script turning a into b.
type Op struct {
	// Kind is ' ' for a line both keep, '-' for a line of a only, '+' for
	// a line of b only.
	Kind byte
	// A and B are the indices in a and b of the next line of each when
	// the step is taken: the line itself for ' ' (both) and '-' (A), '+' (B).
	A, B int
}

// Edits returns the shortest edit script turning a into b, one Op per line
// kept, deleted or inserted. Where a line may be deleted or inserted first at no
// cost to the common lines, it is deleted first, so a changed line reads
// "-" then "+". It takes time and memory proportional to len(a)*len(b):
// callers bound the inputs.
func Edits[T comparable](a, b []T) []Op {
	n, m := len(a), len(b)
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []Op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, Op{' ', i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, Op{'-', i, j})
			i++
		default:
			ops = append(ops, Op{'+', i, j})
			j++
		}
	}
	return ops
}
