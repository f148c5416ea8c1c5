package fencinghttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/fencing/fencinghttp"
)

// A service guards its documents with Middleware and a Store; clients send
// their lock's token with SetHeaders. A stale token yields 409 Conflict.
func ExampleMiddleware() {
	store := fencing.NewMemoryStore()
	handler := fencinghttp.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, holder, _ := fencinghttp.FromContext(r.Context())
		body, _ := io.ReadAll(r.Body)
		err := store.Write(r.Context(), r.URL.Path, tok, holder, body)
		w.WriteHeader(fencinghttp.StatusCode(err))
	}))
	srv := httptest.NewServer(handler)
	defer srv.Close()

	put := func(tok fencing.Token, holder, body string) {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/doc", strings.NewReader(body))
		fencinghttp.SetHeaders(req.Header, tok, holder)
		resp, err := srv.Client().Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Printf("token %d from %s: %s\n", tok, holder, resp.Status)
	}
	put(7, "worker-a", "draft")
	put(8, "worker-b", "final")
	put(7, "worker-a", "late draft")

	resp, _ := srv.Client().Post(srv.URL+"/doc", "text/plain", strings.NewReader("no token"))
	resp.Body.Close()
	fmt.Println("no headers:", resp.Status)
	// Output:
	// token 7 from worker-a: 200 OK
	// token 8 from worker-b: 200 OK
	// token 7 from worker-a: 409 Conflict
	// no headers: 400 Bad Request
}
