package mutants

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrStale is wrapped by Apply's error when a mutant's snippet does not
// occur exactly once in the current source: the code moved on and the
// mutant must be rewritten.
var ErrStale = errors.New("mutants: stale snippet")

// Apply returns src with the mutant's one occurrence of Old replaced by
// New. It fails, wrapping ErrStale, unless Old occurs exactly once.
func (m Mutant) Apply(src []byte) ([]byte, error) {
	switch n := bytes.Count(src, []byte(m.Old)); {
	case m.Old == "" || m.Old == m.New:
		return nil, fmt.Errorf("%w: mutant %s changes nothing", ErrStale, m.Name)
	case n != 1:
		return nil, fmt.Errorf("%w: mutant %s: %q occurs %d times in %s, want exactly once", ErrStale, m.Name, m.Old, n, m.File)
	}
	return bytes.Replace(src, []byte(m.Old), []byte(m.New), 1), nil
}

// ApplyIn applies the mutant to its file under root and returns a function
// that puts the original back.
func (m Mutant) ApplyIn(root string) (restore func() error, err error) {
	path := filepath.Join(root, filepath.FromSlash(m.File))
	orig, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mutants: %w", err)
	}
	mutated, err := m.Apply(orig)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, mutated, 0o644); err != nil {
		return nil, fmt.Errorf("mutants: %w", err)
	}
	return func() error { return os.WriteFile(path, orig, 0o644) }, nil
}

// Root finds the module root at or above dir: the directory whose go.mod
// names module github.com/quorumlock/quorumlock.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("mutants: %w", err)
	}
	for d := dir; ; {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module github.com/quorumlock/quorumlock\n")) {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", fmt.Errorf("mutants: no go.mod of github.com/quorumlock/quorumlock at or above %s", dir)
		}
		d = up
	}
}
