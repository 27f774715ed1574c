package patch

// Reverse returns the patch that undoes p: its file diffs in reverse order,
// each reversed. Applying p and then p.Reverse() gives back the original
// bytes of every file p changes.
func (p *Patch) Reverse() *Patch {
	out := &Patch{Name: p.Name, Files: make([]*FileDiff, len(p.Files))}
	for i, fd := range p.Files {
		out.Files[len(p.Files)-1-i] = fd.Reverse()
	}
	return out
}

// Reverse returns the file diff that undoes fd: old and new names swapped,
// and in every hunk the old and new ranges swapped and each added line
// turned into a removed one and back (removed lines first within a run of
// changes, as diff writes them). A file created by fd is deleted by the
// reverse and the other way round.
//
// Patch, Line and every hunk's Header and Line still point at fd as written
// in the patch file, so an *ApplyError from the reverse names the hunk where
// a reader finds it. fd is not modified.
func (fd *FileDiff) Reverse() *FileDiff {
	out := &FileDiff{Patch: fd.Patch, OldName: fd.NewName, NewName: fd.OldName, Line: fd.Line,
		Hunks: make([]*Hunk, len(fd.Hunks))}
	for i, h := range fd.Hunks {
		out.Hunks[i] = h.reverse()
	}
	return out
}

func (h *Hunk) reverse() *Hunk {
	out := &Hunk{
		OldStart: h.NewStart, OldLines: h.NewLines,
		NewStart: h.OldStart, NewLines: h.OldLines,
		Header: h.Header, Line: h.Line,
		Lines: make([]Line, 0, len(h.Lines)),
	}
	// Within each run of changed lines, the (former) added lines become
	// the removed ones and go first; context lines stay where they are.
	var removed, added []Line
	flush := func() {
		out.Lines = append(out.Lines, removed...)
		out.Lines = append(out.Lines, added...)
		removed, added = removed[:0], added[:0]
	}
	for _, l := range h.Lines {
		switch l.Op {
		case '+':
			removed = append(removed, Line{Op: '-', Text: l.Text})
		case '-':
			added = append(added, Line{Op: '+', Text: l.Text})
		default:
			flush()
			out.Lines = append(out.Lines, l)
		}
	}
	flush()
	return out
}

// Unapply undoes fd on src, the file as fd left it, and returns the bytes
// fd was applied to: fd.Reverse().Apply(src) with the same strictness (every
// line of the hunk's new side must match; offsets are searched as Apply
// does). On error src is returned untouched with an *ApplyError whose Hunk
// and Header name fd's hunk as written in the patch, Want quoting the line
// of the patch's new side that src does not have.
func (fd *FileDiff) Unapply(src []byte) ([]byte, []HunkResult, error) {
	out, res, err := fd.Reverse().Apply(src)
	if ae, ok := err.(*ApplyError); ok && ae.Hint != "" {
		// Apply's hint reads the other way round here: the hunk's old side
		// (the text before the patch) is in the file already.
		ae.Hint = "the file seems to hold the text before this hunk (was the patch never applied, or reverted by hand?)"
	}
	return out, res, err
}
