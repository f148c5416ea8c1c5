package fencinghttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/fencing/fencinghttp"
)

func TestSetHeaders(t *testing.T) {
	h := http.Header{}
	h.Add(fencinghttp.TokenHeader, "1")
	fencinghttp.SetHeaders(h, 42, "worker-1")
	if got := h.Values("fencing-token"); len(got) != 1 || got[0] != "42" {
		t.Errorf("Fencing-Token = %q, want [42]", got)
	}
	if got := h.Values("fencing-holder"); len(got) != 1 || got[0] != "worker-1" {
		t.Errorf("Fencing-Holder = %q, want [worker-1]", got)
	}
}

func TestFromContextEmpty(t *testing.T) {
	if tok, holder, ok := fencinghttp.FromContext(context.Background()); ok || tok != 0 || holder != "" {
		t.Errorf("FromContext(Background) = %d, %q, %v; want 0, \"\", false", tok, holder, ok)
	}
}

func TestMiddleware(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, holder, ok := fencinghttp.FromContext(r.Context())
		if !ok {
			t.Error("handler called without a token in the context")
		}
		fmt.Fprintf(w, "%d %s", tok, holder)
	})
	h := fencinghttp.Middleware(echo)
	cases := []struct {
		name       string
		headers    map[string][]string
		wantStatus int
		wantBody   string // substring
	}{
		{"Valid", map[string][]string{"Fencing-Token": {"7"}, "Fencing-Holder": {"a"}}, 200, "7 a"},
		{"MaxToken", map[string][]string{"Fencing-Token": {fencing.MaxToken.String()}, "Fencing-Holder": {"a"}}, 200, fencing.MaxToken.String()},
		{"MissingToken", map[string][]string{"Fencing-Holder": {"a"}}, 400, "missing Fencing-Token"},
		{"MissingHolder", map[string][]string{"Fencing-Token": {"7"}}, 400, "Fencing-Holder"},
		{"EmptyHolder", map[string][]string{"Fencing-Token": {"7"}, "Fencing-Holder": {""}}, 400, "Fencing-Holder"},
		{"EmptyToken", map[string][]string{"Fencing-Token": {""}, "Fencing-Holder": {"a"}}, 400, "invalid Fencing-Token"},
		{"ZeroToken", map[string][]string{"Fencing-Token": {"0"}, "Fencing-Holder": {"a"}}, 400, "invalid Fencing-Token"},
		{"NegativeToken", map[string][]string{"Fencing-Token": {"-3"}, "Fencing-Holder": {"a"}}, 400, "invalid Fencing-Token"},
		{"NotANumber", map[string][]string{"Fencing-Token": {"seven"}, "Fencing-Holder": {"a"}}, 400, "invalid Fencing-Token"},
		{"AboveMax", map[string][]string{"Fencing-Token": {(fencing.MaxToken + 1).String()}, "Fencing-Holder": {"a"}}, 400, "invalid Fencing-Token"},
		{"TwoTokens", map[string][]string{"Fencing-Token": {"7", "8"}, "Fencing-Holder": {"a"}}, 400, "more than one Fencing-Token"},
		{"TwoHolders", map[string][]string{"Fencing-Token": {"7"}, "Fencing-Holder": {"a", "b"}}, 400, "more than one Fencing-Holder"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPut, "/doc", nil)
			for k, vs := range c.headers {
				for _, v := range vs {
					req.Header.Add(k, v)
				}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.wantStatus || !strings.Contains(rec.Body.String(), c.wantBody) {
				t.Errorf("status %d body %q; want %d and a body containing %q", rec.Code, rec.Body, c.wantStatus, c.wantBody)
			}
		})
	}
}

func TestStatusCode(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, 200},
		{fmt.Errorf("wrapped: %w", fencing.ErrStaleToken), 409},
		{fmt.Errorf("wrapped: %w", fencing.ErrInvalidToken), 400},
		{fmt.Errorf("wrapped: %w", fencing.ErrNotFound), 404},
		{fmt.Errorf("wrapped: %w", context.Canceled), 503},
		{context.DeadlineExceeded, 503},
		{errors.New("connection refused"), 500},
	}
	for _, c := range cases {
		if got := fencinghttp.StatusCode(c.err); got != c.want {
			t.Errorf("StatusCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// documentServer is the service of the end-to-end test and the example: PUT
// writes the body through the store under the request's fencing token, GET
// reads it (and registers the token).
func documentServer(store fencing.Store) http.Handler {
	return fencinghttp.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, holder, _ := fencinghttp.FromContext(r.Context())
		switch r.Method {
		case http.MethodPut:
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if err := store.Write(r.Context(), r.URL.Path, tok, holder, body); err != nil {
				http.Error(w, err.Error(), fencinghttp.StatusCode(err))
				return
			}
			w.WriteHeader(http.StatusNoContent)
		case http.MethodGet:
			v, err := store.Read(r.Context(), r.URL.Path, tok, holder)
			if err != nil {
				http.Error(w, err.Error(), fencinghttp.StatusCode(err))
				return
			}
			_, _ = w.Write(v)
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	}))
}

// do sends one request with fencing headers and returns the status and body.
func do(t testing.TB, c *http.Client, method, url string, tok fencing.Token, holder, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	fencinghttp.SetHeaders(req.Header, tok, holder)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestHTTPEndToEndStaleHolder(t *testing.T) {
	store := fencing.NewMemoryStore()
	srv := httptest.NewServer(documentServer(store))
	defer srv.Close()
	c := srv.Client()
	url := srv.URL + "/doc"

	steps := []struct {
		method     string
		tok        fencing.Token
		holder     string
		body       string
		wantStatus int
		wantBody   string // substring
	}{
		{"GET", 7, "A", "", 404, "no value"},
		{"PUT", 7, "A", "A's draft", 204, ""},
		{"PUT", 7, "A", "A's draft", 204, ""}, // retry of the same request
		// A pauses; its lease expires; B acquires the lock with token 8.
		{"PUT", 8, "B", "B's version", 204, ""},
		{"PUT", 7, "A", "A's late write", 409, "stale token"},
		{"GET", 7, "A", "", 409, "stale token"},
		{"PUT", 8, "C", "impostor", 409, "stale token"},
		{"GET", 8, "B", "", 200, "B's version"},
	}
	for i, s := range steps {
		status, body := do(t, c, s.method, url, s.tok, s.holder, s.body)
		if status != s.wantStatus || !strings.Contains(body, s.wantBody) {
			t.Fatalf("step %d: %s token %d holder %s: status %d body %q; want %d and %q",
				i, s.method, s.tok, s.holder, status, body, s.wantStatus, s.wantBody)
		}
	}
	if h, err := store.Highest(context.Background(), "/doc"); err != nil || h != 8 {
		t.Fatalf("Highest = %d, %v; want 8", h, err)
	}

	// A request without headers never reaches the store.
	resp, err := c.Post(url, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("request without headers: status %d, want 400", resp.StatusCode)
	}
}
