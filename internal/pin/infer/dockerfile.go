package infer

import (
	"strings"

	"github.com/pinseal/pinseal/pkg/pin"
)

// readDockerfile returns the version build arguments (ARG VERSION=…,
// ARG *_VERSION=…) of a Dockerfile and the downloads it makes without a
// digest: RUN curl/wget lines whose instruction carries fewer 64-hex digests
// than URLs, and ADD <url> without --checksum=sha256:….
func readDockerfile(file string, data []byte) (versions, unpinned []pin.Var) {
	lines, nums := dockerLines(data)
	vars := map[string]string{} // ARG and ENV values seen so far ("" + !ok: unknown)
	unknown := map[string]bool{}
	seenVersion := map[string]bool{}
	reported := map[string]bool{}
	for i, line := range lines {
		instr, rest := line, ""
		if k := strings.IndexAny(line, " \t"); k >= 0 {
			instr, rest = line[:k], strings.TrimSpace(line[k+1:])
		}
		switch strings.ToUpper(instr) {
		case "ARG", "ENV":
			for _, kv := range dockerAssignments(strings.ToUpper(instr), rest) {
				val, known := dockerExpand(kv[1], vars, unknown)
				if kv[1] == "" && strings.ToUpper(instr) == "ARG" && !strings.Contains(kv[2], "=") {
					continue // ARG NAME with no default: keeps any earlier value
				}
				vars[kv[0]] = val
				unknown[kv[0]] = !known
				if strings.ToUpper(instr) == "ARG" && isVersionName(kv[0]) {
					v := pin.Var{Name: kv[0], Value: val, Known: known, File: file, Line: nums[i]}
					if !known {
						v.Value = kv[1]
					}
					key := v.Name + "\x00" + v.Value
					if !seenVersion[key] {
						seenVersion[key] = true
						versions = append(versions, v)
					}
				}
			}
		case "RUN":
			text, _ := dockerExpand(rest, vars, unknown)
			dls := findDownloads(text)
			distinct := map[string]bool{}
			for _, d := range dls {
				distinct[d.URL] = true
			}
			if len(dls) == 0 || len(hexDigests(text)) >= len(distinct) {
				continue
			}
			for _, d := range dls {
				if !reported[d.URL] {
					reported[d.URL] = true
					unpinned = append(unpinned, pin.Var{Value: d.URL, Known: d.known(), File: file, Line: nums[i]})
				}
			}
		case "ADD":
			text, _ := dockerExpand(rest, vars, unknown)
			checksum := false
			for _, w := range strings.Fields(text) {
				switch {
				case strings.HasPrefix(w, "--checksum="):
					checksum = normalizeDigest(strings.TrimPrefix(w, "--checksum=")) != ""
				case isHTTPURL(w) && !checksum && !reported[w]:
					reported[w] = true
					unpinned = append(unpinned, pin.Var{Value: w, Known: !strings.Contains(w, "$"), File: file, Line: nums[i]})
				}
			}
		}
	}
	return versions, unpinned
}

// dockerLines joins continued lines (trailing backslash) and drops comment
// lines, returning each instruction with its first line number.
func dockerLines(data []byte) (lines []string, nums []int) {
	phys := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(phys); i++ {
		t := strings.TrimSpace(phys[i])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		start := i
		for strings.HasSuffix(t, `\`) && i+1 < len(phys) {
			t = strings.TrimSuffix(t, `\`)
			i++
			next := strings.TrimSpace(phys[i])
			if strings.HasPrefix(next, "#") {
				continue // comment lines inside an instruction are dropped
			}
			t += " " + next
		}
		lines = append(lines, strings.TrimSuffix(t, `\`))
		nums = append(nums, start+1)
	}
	return lines, nums
}

// dockerAssignments splits the arguments of ARG/ENV into [name, value,
// as-written] triples. ENV also takes the legacy "ENV NAME value" form.
func dockerAssignments(instr, rest string) [][3]string {
	words := dockerWords(rest)
	if instr == "ENV" && len(words) >= 1 && !strings.Contains(words[0], "=") {
		name := words[0]
		return [][3]string{{name, strings.Join(words[1:], " "), name + "="}}
	}
	var out [][3]string
	for _, w := range words {
		name, val, _ := strings.Cut(w, "=")
		if name == "" {
			continue
		}
		out = append(out, [3]string{name, val, w})
	}
	return out
}

// dockerWords splits on unquoted whitespace and removes quotes.
func dockerWords(s string) []string {
	var out []string
	var b strings.Builder
	in := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				b.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

// dockerExpand replaces $NAME and ${NAME} with the values of earlier ARG and
// ENV instructions. Unknown names and modifier forms (${X:-y}) stay as
// written and make known false.
func dockerExpand(s string, vars map[string]string, unknown map[string]bool) (string, bool) {
	if !strings.Contains(s, "$") {
		return s, true
	}
	var b strings.Builder
	known := true
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		end := groupEnd(s, i)
		ref := s[i:end]
		name := ref[1:]
		if strings.HasPrefix(name, "{") && strings.HasSuffix(name, "}") {
			name = name[1 : len(name)-1]
		}
		v, ok := vars[name]
		if !ok || unknown[name] || strings.HasPrefix(name, "(") {
			b.WriteString(ref)
			known = false
		} else {
			b.WriteString(v)
		}
		i = end - 1
	}
	return b.String(), known
}
