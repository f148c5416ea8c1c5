// Package fencinghttp carries fencing tokens over HTTP: a lock holder sets
// the Fencing-Token and Fencing-Holder headers (SetHeaders), and the service
// guarding the resource reads them with Middleware (400 Bad Request when
// they are missing or malformed), checks them with its fencing.Store, and
// answers StatusCode(err) (409 Conflict for a stale token).
//
// It lives apart from package fencing so that packages which only need
// tokens and stores (redlock among them) do not pull in net/http.
package fencinghttp
