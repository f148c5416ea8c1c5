package table

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
	"github.com/quorumlock/quorumlock/jepsen-like/suite"
)

// Row is one fault of the table.
type Row struct {
	Fault        string // the table's wording
	Nemesis      string // the --nemesis LIST
	MajorityDown bool
	Seed         uint64
	Time         time.Duration
	// Plain and Defaults are what the issue expects: the checkers that must
	// be invalid (empty: every checker valid).
	Plain, Defaults []string
	// Second replaces the second column's configuration (nil: Columns[1]);
	// the cell then names its flags.
	Second *Column
}

// Cols are the row's two configurations.
func (r Row) Cols() []Column {
	if r.Second == nil {
		return Columns
	}
	return []Column{Columns[0], *r.Second}
}

// Column is one configuration of the table.
type Column struct {
	Name         string
	NoQuarantine bool
	NoFencing    bool
	// DataLossTolerance: redlock.WithDataLossTolerance (no quarantine).
	DataLossTolerance int
}

// Flags are the jepsen-like run flags of the column.
func (c Column) Flags() string {
	var f []string
	if c.DataLossTolerance > 0 {
		f = append(f, fmt.Sprintf("--data-loss-tolerance %d", c.DataLossTolerance))
	}
	if c.NoQuarantine {
		f = append(f, "--no-quarantine")
	}
	if c.NoFencing {
		f = append(f, "--no-fencing")
	}
	return strings.Join(f, " ")
}

// Tolerant is the data-loss row's second column: the tolerant quorum of
// 4 of 5 masters with its fenced store, quarantine off.
var Tolerant = Column{Name: "`WithDataLossTolerance(1)` + fenced store", DataLossTolerance: 1}

// Columns: plain Redlock, then the defaults with a fenced store.
var Columns = []Column{
	{Name: "plain Redlock (`--no-quarantine --no-fencing`)", NoQuarantine: true, NoFencing: true},
	{Name: "defaults + fenced store"},
}

// Rows are the table's rows with their committed seeds. Every row runs the
// register workload, so that the fenced-register checker has writes to
// check in every cell.
var Rows = []Row{
	{Fault: "minority paused / killed / partitioned", Nemesis: "pause,kill,partition", Seed: 11, Time: 9 * time.Second},
	{Fault: "majority down", Nemesis: "pause,kill", MajorityDown: true, Seed: 12, Time: 6 * time.Second},
	{Fault: "restart without persistence, immediately", Nemesis: "restart", Seed: 13, Time: 4 * time.Second, Plain: []string{"mutex"}},
	{Fault: "restart with AOF always, or delayed past the TTL", Nemesis: "restart-aof,restart-delayed", Seed: 14, Time: 9 * time.Second},
	{Fault: "a master flushed, or replaced by a lagging replica, clients joining", Nemesis: "flush,failover", Seed: 15, Time: 8 * time.Second, Plain: []string{"mutex"}},
	{Fault: "client paused past its lease, then writes", Nemesis: "client-pause", Seed: 16, Time: 4 * time.Second, Plain: []string{"fenced-register"}},
	{Fault: "a master's clock jumps forward", Nemesis: "clock-jump", Seed: 17, Time: 4 * time.Second, Plain: []string{"mutex"}, Defaults: []string{"mutex"}},
	{Fault: "at most 1 master per lease loses data: flushed, restarted empty, rolled back to an older snapshot, or replaced by a lagging replica",
		Nemesis: "data-loss", Seed: 18, Time: 20 * time.Second, Plain: []string{"mutex"}, Second: &Tolerant},
}

// Cell is the outcome of one row in one column.
type Cell struct {
	Result *suite.Result
	// DuringMajorityDown counts acquisitions while a majority was down.
	DuringMajorityDown int
}

// Invalid returns the checkers that said invalid.
func (c Cell) Invalid() []string {
	var out []string
	for _, r := range c.Result.Results {
		if r.Verdict == checker.Invalid {
			out = append(out, r.Checker)
		}
	}
	return out
}

// Text is the markdown of the cell.
func (c Cell) Text(row Row) string {
	r := c.Result
	var parts []string
	for _, n := range strings.Split(row.Nemesis, ",") {
		if r.Faults[n] == 0 {
			parts = append(parts, fmt.Sprintf("%s not injected", n))
		}
	}
	if row.MajorityDown {
		if c.DuringMajorityDown == 0 {
			parts = append(parts, "no acquisitions")
		} else {
			parts = append(parts, fmt.Sprintf("%d acquisitions while a majority was down", c.DuringMajorityDown))
		}
	}
	inv := c.Invalid()
	for _, name := range inv {
		parts = append(parts, "`"+name+"` invalid")
	}
	switch {
	case r.Verdict == checker.Valid:
		parts = append(parts, "valid")
	case r.Verdict == checker.Unknown:
		parts = append(parts, "unknown")
	case !slices.Contains(inv, "fenced-register"):
		parts = append(parts, "`fenced-register` valid")
	}
	return strings.Join(parts, ", ")
}

// Options of Run.
type Options struct {
	Backend string        // default local
	Clients int           // default 4
	Scale   time.Duration // added to every row's time (0: as committed)
	// Progress is called before each run.
	Progress func(row Row, col Column)
}

// Config is the suite configuration of a row in a column.
func (o Options) Config(row Row, col Column) suite.Config {
	if o.Backend == "" {
		o.Backend = suite.Local
	}
	if o.Clients == 0 {
		o.Clients = 4
	}
	return suite.Config{Backend: o.Backend, Workload: "register", Nemeses: []string{row.Nemesis}, Time: row.Time + o.Scale,
		Clients: o.Clients, Seed: row.Seed, NoQuarantine: col.NoQuarantine, NoFencing: col.NoFencing, MajorityDown: row.MajorityDown,
		DataLossTolerance: col.DataLossTolerance}
}

// RunCell runs one row in one column.
func RunCell(ctx context.Context, o Options, row Row, col Column) (Cell, error) {
	if o.Progress != nil {
		o.Progress(row, col)
	}
	res, err := suite.Run(ctx, o.Config(row, col))
	if err != nil {
		return Cell{}, fmt.Errorf("table: %s, %s: %w", row.Fault, col.Name, err)
	}
	c := Cell{Result: res}
	if row.MajorityDown {
		c.DuringMajorityDown = AcquiredDuringFaults(res.Events, generator.Pause, generator.Kill)
	}
	return c, nil
}

// AcquiredDuringFaults counts acquisitions invoked and completed (ok)
// between a start and a stop of any of the faults.
func AcquiredDuringFaults(events []history.Event, faults ...string) int {
	active, n := 0, 0
	invokedInside := make(map[int]bool)
	for _, e := range events {
		if e.F == history.Acquire && e.Type == history.Invoke {
			invokedInside[e.Process] = active > 0
		}
		if e.F == history.Nemesis {
			name, phase, _ := strings.Cut(e.Value, " ")
			if slices.Contains(faults, name) {
				switch phase {
				case "start":
					active++
				case "stop":
					active--
				}
			}
			continue
		}
		if active > 0 && e.F == history.Acquire && e.Type == history.OK && invokedInside[e.Process] {
			n++
		}
	}
	return n
}

// Markdown renders the table.
func Markdown(rows []Row, cells [][]Cell) string {
	var b strings.Builder
	b.WriteString("| fault | nemesis | seed |")
	for _, c := range Columns {
		b.WriteString(" " + c.Name + " |")
	}
	b.WriteString("\n| --- | --- | --- |" + strings.Repeat(" --- |", len(Columns)) + "\n")
	for i, row := range rows {
		fmt.Fprintf(&b, "| %s | `%s` | %d |", row.Fault, row.Nemesis, row.Seed)
		for ci, c := range cells[i] {
			text := c.Text(row)
			if col := row.Cols()[ci]; col != Columns[ci] {
				text = "`" + col.Flags() + "`: " + text
			}
			b.WriteString(" " + text + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// The markers around the generated table in docs/jepsen-like.md.
const (
	Begin = "<!-- table:begin (generated by: go run ./jepsen-like/cmd/jepsen-like table --out docs/jepsen-like.md) -->"
	End   = "<!-- table:end -->"
)

// Replace writes table between the markers of the file at path.
func Replace(path, table string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("table: %w", err)
	}
	s := string(b)
	i, j := strings.Index(s, Begin), strings.Index(s, End)
	if i < 0 || j < i {
		return fmt.Errorf("table: %s has no %q ... %q markers", path, Begin, End)
	}
	s = s[:i+len(Begin)] + "\n" + table + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}
