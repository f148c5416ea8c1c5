package pgtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissingPostgreSQLNamesThePackage(t *testing.T) {
	onlyInitdb := t.TempDir()
	if err := os.WriteFile(filepath.Join(onlyInitdb, "initdb"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := firstWithBinaries([]string{t.TempDir(), onlyInitdb})
	if err == nil || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Fatalf("error = %v; want one naming `apt-get install postgresql`", err)
	}
}

func TestVersionOrder(t *testing.T) {
	if !(version("/usr/lib/postgresql/15/bin") > version("/usr/lib/postgresql/9.6/bin")) {
		t.Fatal("version 15 does not sort above 9.6")
	}
}

func TestWithSearchPath(t *testing.T) {
	got, err := withSearchPath("postgres://u:p@h:5/db?sslmode=disable&options=-c%20work_mem%3D4MB", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "options=-c%20work_mem%3D4MB%20-c%20search_path%3Ds1") || !strings.Contains(got, "sslmode=disable") {
		t.Fatalf("withSearchPath = %s", got)
	}
}

func TestUnsearchableParent(t *testing.T) {
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(locked, "inner")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := unsearchableParent(inner); got != locked && got != dir {
		t.Fatalf("unsearchableParent(%s) = %q, want %s (or a parent)", inner, got, locked)
	}
	if got := unsearchableParent("/"); got != "" {
		t.Fatalf(`unsearchableParent("/") = %q, want ""`, got)
	}
}
