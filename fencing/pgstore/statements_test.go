package pgstore

import (
	"os"
	"strings"
	"testing"
)

// TestStatementsDocumented keeps docs/fencing-stores.md in step with the SQL
// the store runs.
func TestStatementsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/fencing-stores.md")
	if err != nil {
		t.Fatalf("read the store's documentation: %v", err)
	}
	create, write, read, highest := statements(DefaultTable)
	for name, stmt := range map[string]string{"create": create, "write": write, "read": read, "highest": highest} {
		if !strings.Contains(string(doc), stmt) {
			t.Errorf("docs/fencing-stores.md does not show the %s statement verbatim:\n%s", name, stmt)
		}
	}
}
