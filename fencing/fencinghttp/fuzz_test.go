package fencinghttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/fencing"
)

// FuzzMiddleware: whatever the token and holder headers hold (nothing, two
// values, garbage), the middleware either passes the request on with
// exactly the parsed token and the holder, or answers 400 with a reason
// without calling the handler; never a panic.
func FuzzMiddleware(f *testing.F) {
	f.Add("1", "worker-1", uint8(1), uint8(1))
	f.Add("9007199254740991", "w", uint8(1), uint8(1))
	f.Add("9007199254740992", "w", uint8(1), uint8(1))
	f.Add("0", "w", uint8(1), uint8(1))
	f.Add("", "", uint8(0), uint8(0))
	f.Add("5", "", uint8(1), uint8(1))
	f.Add("5", "w", uint8(2), uint8(1))
	f.Add("5", "w", uint8(1), uint8(2))
	f.Add("-3", "w\r\nX-Evil: 1", uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, token, holder string, ntok, nholder uint8) {
		req := httptest.NewRequest(http.MethodPost, "/write", nil)
		for range ntok % 3 {
			req.Header.Add(TokenHeader, token)
		}
		for range nholder % 3 {
			req.Header.Add(HolderHeader, holder)
		}
		called := false
		h := Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			called = true
			tok, who, ok := FromContext(r.Context())
			want, err := fencing.ParseToken(token)
			if !ok || err != nil || tok != want || who != holder {
				t.Fatalf("handler got %d %q %v for headers %q %q", tok, who, ok, token, holder)
			}
		}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		_, parseErr := fencing.ParseToken(token)
		valid := ntok%3 == 1 && nholder%3 == 1 && holder != "" && parseErr == nil
		switch {
		case valid && (!called || rec.Code != http.StatusOK):
			t.Fatalf("valid headers %q %q: status %d, handler called %v", token, holder, rec.Code, called)
		case !valid && (called || rec.Code != http.StatusBadRequest):
			t.Fatalf("invalid headers %q %q (%d, %d): status %d, handler called %v", token, holder, ntok%3, nholder%3, rec.Code, called)
		case !valid && !strings.Contains(rec.Body.String(), "Fencing-"):
			t.Fatalf("400 without a reason naming the header: %q", rec.Body.String())
		}
	})
}
