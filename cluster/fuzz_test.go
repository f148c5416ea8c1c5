package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fuzzSeeds are master URLs of every shape Dial meets.
var fuzzSeeds = []string{
	"redis://127.0.0.1:6379",
	"rediss://user:pa%40ss@redis.internal:6380/2?dial_timeout=3s&tls_ca=/none",
	"redis://:secretpw@h:1/0",
	"redis://u:secretpw@h:notaport",
	"redis://u:secret/pw@h:1",
	"redis://[::1]:6379/?pool_size=3",
	"unix:///tmp/redis.sock",
	"127.0.0.1:6379",
	"rediss://h/?tls_cert=a&tls_key=b&tls_server_name=x&skip_verify=true",
	"redis://h:1/?bogus=1",
	"redis://%zz@h",
	"",
	"redis://",
	"rediss://u:p@[fe80::1%25eth0]:6380",
}

// passwordOf is what a person would call the password of raw: between the
// first ":" after the scheme and the last "@" (it holds for URLs that do
// not parse too).
func passwordOf(raw string) string {
	start, end := passwordSpan(raw)
	return raw[start:end]
}

// passwordSpan is where passwordOf's password sits in raw (start == end when
// there is none).
func passwordSpan(raw string) (start, end int) {
	offset := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		offset = i + len("://")
	}
	rest := raw[offset:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return 0, 0
	}
	colon := strings.Index(rest[:at], ":")
	if colon < 0 {
		return 0, 0
	}
	return offset + colon + 1, offset + at
}

// withPassword is raw with its password (passwordSpan) replaced by pw.
func withPassword(raw, pw string) string {
	start, end := passwordSpan(raw)
	return raw[:start] + pw + raw[end:]
}

// dialError dials raw (no I/O) and returns the error's text, "" on success.
func dialError(t *testing.T, raw string) string {
	c, err := Dial(context.Background(), []string{raw})
	if err != nil {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("Dial(%q) = %v; want nil or ErrInvalidArgument", raw, err)
		}
		return err.Error()
	}
	defer c.Close()
	if len(c.Clients()) != 1 {
		t.Fatalf("Dial(%q): %d clients", raw, len(c.Clients()))
	}
	return "URLs: " + strings.Join(c.URLs(), " ")
}

// FuzzDialURL: any master URL gives a client or an ErrInvalidArgument, and
// the password is never in the error or in URLs(): whatever of it shows
// must show as well when the password is replaced by other letters.
func FuzzDialURL(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		text := dialError(t, raw)
		pw := passwordOf(raw)
		if len(pw) < 4 || !strings.Contains(text, pw) {
			return
		}
		other := strings.Repeat("Q", len(pw))
		if strings.Contains(pw, "Q") {
			other = strings.Repeat("Z", len(pw))
		}
		if !strings.Contains(dialError(t, withPassword(raw, other)), pw) {
			t.Fatalf("Dial(%q) shows the password %q: %s", raw, pw, text)
		}
	})
}

// FuzzMastersList: a REDLOCK_MASTERS value gives one client per listed URL,
// or an ErrInvalidArgument.
func FuzzMastersList(f *testing.F) {
	f.Add(strings.Join(fuzzSeeds[:2], ","))
	f.Add(" redis://h:1 , , redis://h:2 ")
	f.Add("redis://h:1,redis://h:1/0")
	f.Add(",,,")
	f.Fuzz(func(t *testing.T, v string) {
		urls := splitMasters(v)
		for _, u := range urls {
			if u == "" || u != strings.TrimSpace(u) || strings.Contains(u, ",") {
				t.Fatalf("splitMasters(%q) gave %q", v, u)
			}
		}
		c, err := Dial(context.Background(), urls)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("Dial(%q) = %v; want ErrInvalidArgument", urls, err)
			}
			return
		}
		defer c.Close()
		if len(c.Clients()) != len(urls) {
			t.Fatalf("%d URLs, %d clients", len(urls), len(c.Clients()))
		}
	})
}
