package docscheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository root, two levels up from this package.
const root = "../.."

// sentinels returns the exported package-level variables named Err* that
// the non-test files of the package in dir declare.
func sentinels(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if n.IsExported() && strings.HasPrefix(n.Name, "Err") {
						out = append(out, n.Name)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// section returns the README text under the heading "### package `name`",
// up to the next heading of that level or above.
func section(t *testing.T, readme, name string) string {
	t.Helper()
	head := "### package `" + name + "`\n"
	i := strings.Index(readme, head)
	if i < 0 {
		t.Fatalf("README.md has no heading %q", strings.TrimSpace(head))
	}
	rest := readme[i+len(head):]
	if j := regexp.MustCompile(`(?m)^#{1,3} `).FindStringIndex(rest); j != nil {
		rest = rest[:j[0]]
	}
	return rest
}

// named returns the Err* identifiers a README section names in code spans,
// unqualified (`redlock.ErrLockLost` in the semaphore's section is
// another package's).
func named(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`(Err[A-Z][A-Za-z0-9]*)`").FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Every exported sentinel of redlock and redlock/semaphore is named in the
// README's section of its package, and the README names no sentinel that
// does not exist. When a sentinel is added or renamed, the failure says
// which names differ.
func TestReadmeNamesEverySentinel(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, pkg := range []string{"redlock", "redlock/semaphore"} {
		code, doc := sentinels(t, pkg), named(section(t, readme, pkg))
		if len(code) == 0 {
			t.Fatalf("package %s: no Err* sentinel found: is the path right?", pkg)
		}
		var missing, stale []string
		for _, n := range code {
			if !slices.Contains(doc, n) {
				missing = append(missing, n)
			}
		}
		for _, n := range doc {
			if !slices.Contains(code, n) {
				stale = append(stale, n)
			}
		}
		if len(missing) > 0 {
			t.Errorf("README.md, section package `%s`, does not name %s: add them to its error list", pkg, strings.Join(missing, ", "))
		}
		if len(stale) > 0 {
			t.Errorf("README.md, section package `%s`, names %s, which package %s does not export", pkg, strings.Join(stale, ", "), pkg)
		}
	}
}
