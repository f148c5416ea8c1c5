package redlock

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The snippet in the package documentation is the body of docSnippet in
// example_test.go, which compiles and runs (Example): so the snippet does.
func TestDocSnippet(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var snippet []string
	for _, line := range strings.Split(string(doc), "\n") {
		if code, ok := strings.CutPrefix(line, "//\t"); ok {
			snippet = append(snippet, strings.TrimSpace(code))
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_test.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "docSnippet" {
			continue
		}
		text := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			body = append(body, strings.TrimSpace(line))
		}
	}
	if len(body) == 0 {
		t.Fatal("no docSnippet in example_test.go")
	}
	if got, want := strings.Join(snippet, "\n"), strings.Join(body, "\n"); got != want {
		t.Fatalf("doc.go's snippet:\n%s\n\ndiffers from docSnippet's body:\n%s", got, want)
	}
}
