package fencinghttp

import (
	"context"
	"errors"
	"net/http"

	"github.com/quorumlock/quorumlock/fencing"
)

// HTTP header names that carry a fencing token and its holder from a lock
// holder to the service guarding the resource.
const (
	// TokenHeader carries the token in decimal, as fencing.Token.String formats it.
	TokenHeader = "Fencing-Token"
	// HolderHeader carries the holder name the Store compares on equal tokens.
	HolderHeader = "Fencing-Holder"
)

// SetHeaders sets the TokenHeader and HolderHeader of h to t and holder,
// replacing any values already there.
func SetHeaders(h http.Header, t fencing.Token, holder string) {
	h.Set(TokenHeader, t.String())
	h.Set(HolderHeader, holder)
}

type contextKey struct{}

type fence struct {
	token  fencing.Token
	holder string
}

// NewContext returns a copy of ctx carrying token and holder, as Middleware
// does for each request; FromContext reads them back.
func NewContext(ctx context.Context, token fencing.Token, holder string) context.Context {
	return context.WithValue(ctx, contextKey{}, fence{token, holder})
}

// FromContext returns the token and holder stored in ctx by Middleware (or
// NewContext). ok is false, and the token zero, when ctx carries none.
func FromContext(ctx context.Context) (token fencing.Token, holder string, ok bool) {
	f, ok := ctx.Value(contextKey{}).(fence)
	return f.token, f.holder, ok
}

// Middleware parses the TokenHeader and HolderHeader of every request and
// passes the request on to next with both in its context (see FromContext).
// It answers 400 Bad Request with a plain-text reason, without calling next,
// when either header is missing, repeated or empty, or the token is not a
// decimal integer in [1, fencing.MaxToken].
func Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, holder, msg := parseHeaders(r.Header)
		if msg != "" {
			http.Error(w, msg, http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r.WithContext(NewContext(r.Context(), tok, holder)))
	})
}

// parseHeaders returns the token and holder of h, or a message saying what is
// wrong with them.
func parseHeaders(h http.Header) (fencing.Token, string, string) {
	toks, holders := h.Values(TokenHeader), h.Values(HolderHeader)
	switch {
	case len(toks) == 0:
		return 0, "", "missing " + TokenHeader + " header"
	case len(toks) > 1:
		return 0, "", "more than one " + TokenHeader + " header"
	case len(holders) == 0 || holders[0] == "":
		return 0, "", "missing or empty " + HolderHeader + " header"
	case len(holders) > 1:
		return 0, "", "more than one " + HolderHeader + " header"
	}
	tok, err := fencing.ParseToken(toks[0])
	if err != nil {
		return 0, "", "invalid " + TokenHeader + " header: " + err.Error()
	}
	return tok, holders[0], ""
}

// StatusCode maps an error returned by a Store to the HTTP status a handler
// should answer with: 200 OK for nil, 409 Conflict for fencing.ErrStaleToken, 400 Bad
// Request for fencing.ErrInvalidToken, 404 Not Found for fencing.ErrNotFound, 503 Service
// Unavailable when the request's context was cancelled or timed out, and 500
// Internal Server Error for anything else.
func StatusCode(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, fencing.ErrStaleToken):
		return http.StatusConflict
	case errors.Is(err, fencing.ErrInvalidToken):
		return http.StatusBadRequest
	case errors.Is(err, fencing.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}
