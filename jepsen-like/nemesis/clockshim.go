package nemesis

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

//go:embed clockshim/clockshim.c
var clockShimSource []byte

// BuildClockShim compiles clockshim/clockshim.c (an LD_PRELOAD shim shifting
// CLOCK_REALTIME, gettimeofday and time by the nanoseconds in the file named
// by CLOCKSHIM_FILE) with gcc into dir and returns the path of the
// shared object. It fails with gcc's output when gcc is missing or fails.
func BuildClockShim(dir string) (string, error) {
	src := filepath.Join(dir, "clockshim.c")
	if err := os.WriteFile(src, clockShimSource, 0o644); err != nil {
		return "", fmt.Errorf("clockshim: %w", err)
	}
	out := filepath.Join(dir, "clockshim.so")
	cmd := exec.Command("gcc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-o", out, src)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("clockshim: gcc: %w: %s", err, b)
	}
	return out, nil
}
