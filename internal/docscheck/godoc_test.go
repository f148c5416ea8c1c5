package docscheck

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxGoDocLines is issue 21's bound on the redlock package's face: `go doc
// ./redlock` fits on one screen.
const maxGoDocLines = 60

// TestRedlockGoDocFitsOnAScreen keeps the package's exported surface small:
// a new exported name, or a longer package comment, must make room.
func TestRedlockGoDocFitsOnAScreen(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go tool on PATH: ", err)
	}
	cmd := exec.Command(goTool, "doc", "./redlock")
	cmd.Dir = filepath.Join(root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go doc ./redlock: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "\n"); n >= maxGoDocLines {
		t.Fatalf("go doc ./redlock prints %d lines; keep it under %d (unexport, group, or shorten doc.go)\n%s", n, maxGoDocLines, out)
	}
}
