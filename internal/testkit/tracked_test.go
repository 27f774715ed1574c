package testkit

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// maxTracked is the largest file the repository tracks outside testdata/
// and examples/: every clone downloads every version of it.
const maxTracked = 2 << 20

// binaryMagic are the first bytes of the executables and objects Go builds
// (ELF, Mach-O 32/64 and fat, PE, wasm).
var binaryMagic = [][]byte{
	[]byte("\x7fELF"), {0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf},
	{0xcf, 0xfa, 0xed, 0xfe}, {0xca, 0xfe, 0xba, 0xbe}, []byte("MZ"), []byte("\x00asm"),
}

// tracked is one entry of `git ls-files --stage`.
type tracked struct {
	mode, path string
}

// TestNothingBuiltIsTracked: git tracks no built program (a compiled binary
// anywhere, or an executable file that is no #! script) and no file larger
// than 2 MB outside testdata/ and examples/. Skipped outside a git checkout.
func TestNothingBuiltIsTracked(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git program")
	}
	out, err := exec.Command("git", "-C", "../..", "ls-files", "--stage", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v)", err)
	}
	files := parseLsFiles(out)
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files: not the repository", len(files))
	}
	for _, f := range files {
		if err := trackedProblem(f, "../../"+f.path); err != nil {
			t.Error(err)
		}
	}
}

// parseLsFiles reads `git ls-files --stage -z`: "MODE OBJECT STAGE\tPATH\0".
func parseLsFiles(out []byte) []tracked {
	var files []tracked
	for _, rec := range strings.Split(string(out), "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		mode, _, _ := strings.Cut(meta, " ")
		files = append(files, tracked{mode: mode, path: p})
	}
	return files
}

// trackedProblem says what is wrong with tracking f, whose bytes are at
// file (a file deleted in the work tree is judged by git, not here).
func trackedProblem(f tracked, file string) error {
	if f.mode == "160000" || f.mode == "120000" { // submodule, symlink
		return nil
	}
	fh, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil
	}
	head := make([]byte, 4)
	n, _ := io.ReadFull(fh, head)
	head = head[:n]
	for _, m := range binaryMagic {
		if bytes.HasPrefix(head, m) {
			return fmt.Errorf("%s is a compiled program (starts %q): untrack it (git rm --cached %s) and list it in .gitignore", f.path, head, f.path)
		}
	}
	if f.mode == "100755" && !bytes.HasPrefix(head, []byte("#!")) {
		return fmt.Errorf("%s is tracked as executable but is no #! script: untrack it if it is built, else git update-index --chmod=-x %s", f.path, f.path)
	}
	if fi.Size() > maxTracked && !bulkAllowed(f.path) {
		return fmt.Errorf("%s is %s bytes, over the %d-byte bound outside testdata/ and examples/: every clone downloads it; generate it in the test or move it under testdata/", f.path, strconv.FormatInt(fi.Size(), 10), maxTracked)
	}
	return nil
}

// bulkAllowed: large files may live under a testdata folder (at any depth)
// or examples/.
func bulkAllowed(p string) bool {
	return strings.HasPrefix(p, "examples/") || strings.HasPrefix(p, "testdata/") || strings.Contains(p, "/testdata/")
}

func TestTrackedProblem(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := bytes.Repeat([]byte("a"), maxTracked+1)
	for _, tc := range []struct {
		name string
		f    tracked
		data []byte
		bad  bool
	}{
		{"source", tracked{"100644", "pkg/x/x.go"}, []byte("package x\n"), false},
		{"script", tracked{"100755", "scripts/demo.sh"}, []byte("#!/bin/sh\n"), false},
		{"elf binary", tracked{"100644", "cmd/verifier/verifier"}, []byte("\x7fELF\x02\x01"), true},
		{"executable, no shebang", tracked{"100755", "tool"}, []byte("text"), true},
		{"pe binary", tracked{"100644", "x.exe"}, []byte("MZ\x90\x00"), true},
		{"big", tracked{"100644", "docs/big.txt"}, big, true},
		{"big under testdata", tracked{"100644", "pkg/x/testdata/big.txt"}, big, false},
		{"big under examples", tracked{"100644", "examples/big.yaml"}, big, false},
		{"just at the bound", tracked{"100644", "docs/at.txt"}, big[:maxTracked], false},
	} {
		err := trackedProblem(tc.f, write(strings.NewReplacer("/", "_").Replace(tc.f.path), tc.data))
		if (err != nil) != tc.bad {
			t.Errorf("%s: %v, want a problem %v", tc.name, err, tc.bad)
		}
	}
	got := parseLsFiles([]byte("100644 abc 0\ta b.go\x00100755 def 0\tscripts/x.sh\x00"))
	if len(got) != 2 || got[0] != (tracked{"100644", "a b.go"}) || got[1] != (tracked{"100755", "scripts/x.sh"}) {
		t.Errorf("parseLsFiles = %v", got)
	}
}
