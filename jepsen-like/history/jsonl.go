package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Decode parses JSON lines (blank lines are skipped; unknown fields are an
// error) and validates the result with Validate. Errors wrap ErrInvalid and
// give the line number.
func Decode(r io.Reader) ([]Event, error) {
	var events []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var e Event
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrInvalid, line, err)
		}
		if err := requireFields(b); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrInvalid, line, err)
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("history: read: %w", err)
	}
	if err := Validate(events); err != nil {
		return nil, err
	}
	return events, nil
}

// requireFields rejects lines without index, process, type, f or time_ns,
// and null for any field: a zero value is valid for some of them, so absence
// (and null, which decodes as zero) must be seen in the JSON.
func requireFields(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for _, f := range []string{"index", "process", "type", "f", "time_ns"} {
		if _, ok := m[f]; !ok {
			return fmt.Errorf("missing field %q", f)
		}
	}
	for f, v := range m {
		if string(bytes.TrimSpace(v)) == "null" {
			return fmt.Errorf("field %q is null", f)
		}
	}
	return nil
}

// ReadFile reads and validates a history file.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	return Decode(f)
}

// Encode writes events as JSON lines.
func Encode(w io.Writer, events []Event) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("history: write: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("history: write: %w", err)
	}
	return nil
}

// WriteFile writes events to path as JSON lines.
func WriteFile(path string, events []Event) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if err := Encode(f, events); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}
