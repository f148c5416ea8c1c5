package promobserver

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quorumlock/quorumlock/redlock"
)

// kinds returns every value redlock.MasterResult.Kind can return: the
// string literals of its return statements, read from redlock's source.
func kinds(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../observer.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "Kind" || fn.Recv == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if r, ok := n.(*ast.ReturnStmt); ok {
				for _, e := range r.Results {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						out = append(out, v)
					}
				}
			}
			return true
		})
	}
	if len(out) == 0 {
		t.Fatal("found no MasterResult.Kind in redlock/observer.go")
	}
	slices.Sort(out)
	return out
}

// The HELP of master_results_total lists every result label the emitter
// (redlock.MasterResult.Kind) can produce, and no other.
func TestMasterResultsHelpListsEveryResult(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	o.Observe(t.Context(), redlock.Event{Op: redlock.OpAcquire, Outcome: redlock.OutcomeOK, Masters: []redlock.MasterResult{{Master: 0}}})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var help string
	for _, mf := range mfs {
		if mf.GetName() == "quorumlock_redlock_master_results_total" {
			help = mf.GetHelp()
		}
	}
	_, list, ok := strings.Cut(strings.TrimSuffix(help, "."), ": ")
	if !ok {
		t.Fatalf("HELP %q has no list of results", help)
	}
	var listed []string
	for _, v := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		if v != "or" {
			listed = append(listed, v)
		}
	}
	slices.Sort(listed)
	if want := kinds(t); !slices.Equal(listed, want) {
		t.Fatalf("HELP lists %v; MasterResult.Kind returns %v", listed, want)
	}
}
