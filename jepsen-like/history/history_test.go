package history

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestDecodeRejectsBadHistories(t *testing.T) {
	cases := map[string]string{
		"unknown type":        `{"index":0,"process":0,"type":"done","f":"acquire","key":"k","time_ns":0}`,
		"unknown f":           `{"index":0,"process":0,"type":"invoke","f":"lock","key":"k","time_ns":0}`,
		"missing time_ns":     `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k"}`,
		"unknown field":       `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0,"extra":1}`,
		"no key":              `{"index":0,"process":0,"type":"invoke","f":"acquire","time_ns":0}`,
		"completion first":    `{"index":0,"process":0,"type":"ok","f":"release","key":"k","time_ns":0}`,
		"nemesis not info":    `{"index":0,"process":-1,"type":"invoke","f":"nemesis","time_ns":0}`,
		"not JSON":            `{"index":0,`,
		"ok without validity": "{\"index\":0,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\",\"time_ns\":0}\n{\"index\":1,\"process\":0,\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"k\",\"time_ns\":1}",
		"index repeats":       "{\"index\":0,\"process\":-1,\"type\":\"info\",\"f\":\"nemesis\",\"time_ns\":0}\n{\"index\":0,\"process\":-1,\"type\":\"info\",\"f\":\"nemesis\",\"time_ns\":1}",
		"time goes back":      "{\"index\":0,\"process\":-1,\"type\":\"info\",\"f\":\"nemesis\",\"time_ns\":5}\n{\"index\":1,\"process\":-1,\"type\":\"info\",\"f\":\"nemesis\",\"time_ns\":1}",
		"double invoke":       "{\"index\":0,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\",\"time_ns\":0}\n{\"index\":1,\"process\":0,\"type\":\"invoke\",\"f\":\"write\",\"key\":\"k\",\"time_ns\":1}",
		"mismatched f":        "{\"index\":0,\"process\":0,\"type\":\"invoke\",\"f\":\"acquire\",\"key\":\"k\",\"time_ns\":0}\n{\"index\":1,\"process\":0,\"type\":\"ok\",\"f\":\"write\",\"key\":\"k\",\"time_ns\":1}",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(in))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode: %v, want ErrInvalid", err)
			}
		})
	}
}

func TestRecorderRoundTrip(t *testing.T) {
	r := NewRecorder()
	r.Record(Event{Process: 0, Type: Invoke, F: Acquire, Key: "k"})
	r.Nemesis("m1", "pause start")
	ok := r.Record(Event{Process: 0, Type: OK, F: Acquire, Key: "k", Token: 3, ValidUntilNS: r.Now() + 1e9})
	if ok.Index != 2 {
		t.Fatalf("index %d, want 2", ok.Index)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, r.Events()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"valid_until_ns"`) || !strings.Contains(buf.String(), `"f":"nemesis"`) {
		t.Fatalf("encoded: %s", buf.String())
	}
	back, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || back[2] != ok {
		t.Fatalf("round trip: %v", back)
	}
}

// Issue 18 §1: validation as docs/jepsen-like.md says.
func TestDecodeRejectsWhatTheFormatForbids(t *testing.T) {
	inv := `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`
	cases := map[string]string{
		"index gap":          inv + "\n" + `{"index":2,"process":0,"type":"ok","f":"acquire","key":"k","time_ns":1,"valid_until_ns":9}`,
		"not from 0":         `{"index":1,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		"completion key":     inv + "\n" + `{"index":1,"process":0,"type":"ok","f":"acquire","key":"other","time_ns":1,"valid_until_ns":9}`,
		"time_ns null":       `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":null}`,
		"process null":       `{"index":0,"process":null,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		"limit not a number": `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"s","value":"limit=abc","time_ns":0}`,
		"limit 0":            `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"s","value":"limit=0","time_ns":0}`,
		"acquire value":      `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"s","value":"hello","time_ns":0}`,
		"limits differ": `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":0}` + "\n" +
			`{"index":1,"process":0,"type":"ok","f":"acquire","key":"s","value":"limit=3","time_ns":1,"valid_until_ns":9}`,
		"ttl on an ok":        inv + "\n" + `{"index":1,"process":0,"type":"ok","f":"acquire","key":"k","time_ns":1,"valid_until_ns":9,"ttl_ns":5}`,
		"negative ttl":        `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0,"ttl_ns":-1}`,
		"sent on an invoke":   `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0,"sent_ns":1}`,
		"sent after the ok":   inv + "\n" + `{"index":1,"process":0,"type":"ok","f":"acquire","key":"k","time_ns":5,"valid_until_ns":9,"sent_ns":6}`,
		"unknown f":           `{"index":0,"process":0,"type":"invoke","f":"remove","key":"set","time_ns":0}`,
		"bucket on an invoke": `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0,"bucket":"1/1024"}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(in))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode: %v, want ErrInvalid", err)
			}
			t.Log(err)
		})
	}
	// A failed acquire's value is its error; ttl_ns on the invoke is fine.
	ok := `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0,"ttl_ns":1000000000}` + "\n" +
		`{"index":1,"process":0,"type":"fail","f":"acquire","key":"k","value":"error: not acquired","time_ns":1}`
	if _, err := Decode(strings.NewReader(ok)); err != nil {
		t.Fatal(err)
	}
	// sent_ns on an acquire's ok, not after it; the set workload's add and
	// read-set.
	ok = inv + "\n" + `{"index":1,"process":0,"type":"ok","f":"acquire","key":"k","time_ns":5,"valid_until_ns":9,"sent_ns":5,"bucket":"1/1024"}` + "\n" +
		`{"index":2,"process":0,"type":"invoke","f":"add","key":"set","value":"a","time_ns":6}` + "\n" +
		`{"index":3,"process":0,"type":"ok","f":"add","key":"set","value":"a","time_ns":7}` + "\n" +
		`{"index":4,"process":1,"type":"invoke","f":"read-set","key":"set","time_ns":8}` + "\n" +
		`{"index":5,"process":1,"type":"ok","f":"read-set","key":"set","value":"a","time_ns":9}`
	if _, err := Decode(strings.NewReader(ok)); err != nil {
		t.Fatal(err)
	}
}
