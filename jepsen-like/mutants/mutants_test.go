package mutants

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every mutant's snippet occurs exactly once in the current source, so the
// table measures the code as it is: when the code moves on, this fails and
// names the mutant to rewrite.
func TestSnippetsMatchTheSourceExactlyOnce(t *testing.T) {
	root, err := Root(".")
	if err != nil {
		t.Fatal(err)
	}
	names := make(map[string]bool)
	for _, m := range All {
		if names[m.Name] {
			t.Errorf("two mutants named %s", m.Name)
		}
		names[m.Name] = true
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.File)))
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		if _, err := m.Apply(b); err != nil {
			t.Errorf("%v", err)
		}
	}
	if len(All) < 12 {
		t.Errorf("%d mutants, the issue asks for at least 12", len(All))
	}
}

func TestApplyFailsLoudly(t *testing.T) {
	m := Mutant{Name: "x", File: "f.go", Old: "a := 1\n", New: "a := 2\n"}
	if _, err := m.Apply([]byte("b := 1\n")); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "0 times") {
		t.Fatalf("missing snippet: %v", err)
	}
	if _, err := m.Apply([]byte("a := 1\na := 1\n")); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "2 times") {
		t.Fatalf("snippet twice: %v", err)
	}
	got, err := m.Apply([]byte("x\na := 1\ny\n"))
	if err != nil || string(got) != "x\na := 2\ny\n" {
		t.Fatalf("Apply: %q, %v", got, err)
	}
	if _, err := (Mutant{Name: "same", Old: "a", New: "a"}).Apply([]byte("a")); !errors.Is(err, ErrStale) {
		t.Fatalf("a mutant that changes nothing: %v", err)
	}
	if _, err := Select([]string{"no-such"}); err == nil {
		t.Fatal("Select of an unknown name")
	}
}

// ApplyIn's restore puts the file back byte for byte.
func TestApplyInRestores(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.go")
	orig := "package f\n\nconst a = 1\n"
	if err := os.WriteFile(p, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	restore, err := Mutant{Name: "x", File: "f.go", Old: "a = 1", New: "a = 2"}.ApplyIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), "a = 2") {
		t.Fatalf("not applied: %s", b)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != orig {
		t.Fatalf("not restored: %s", b)
	}
}
