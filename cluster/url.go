package cluster

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"
)

// EnvPassword is the environment variable WithEnvPassword (and so FromEnv)
// reads: the password of masters whose URL carries none.
const EnvPassword = "REDLOCK_PASSWORD"

// URL query parameters Dial understands besides go-redis's own (dial_timeout,
// pool_size, skip_verify, ...); they are removed before go-redis parses the
// URL. The tls_ ones are only valid on rediss:// URLs.
const (
	ParamCA         = "tls_ca"          // PEM file of the CA(s) to trust (WithCA)
	ParamCert       = "tls_cert"        // PEM client certificate (WithClientCert)
	ParamKey        = "tls_key"         // PEM key of the client certificate
	ParamServerName = "tls_server_name" // host name to verify instead of the URL's host
)

// WithCredentials sets the ACL user name and password for masters whose URL
// carries no password (the URL's user name, if any, is kept). An empty
// username means the default user (AUTH password). Both empty is
// ErrInvalidArgument. The password never appears in errors, logs or URLs().
func WithCredentials(username, password string) Option {
	return func(c *config) error {
		if username == "" && password == "" {
			return fmt.Errorf("%w: empty user name and password", ErrInvalidArgument)
		}
		c.username, c.password, c.credentials = username, password, true
		return nil
	}
}

// WithEnvPassword makes Dial read REDLOCK_PASSWORD (EnvPassword) and use it
// for masters whose URL carries no password and when WithCredentials is not
// given. Unset or empty, it changes nothing. FromEnv always applies it.
func WithEnvPassword() Option {
	return func(c *config) error { c.envPassword = true; return nil }
}

// master is one parsed master URL.
type master struct {
	opts    *redis.Options
	display string // the URL with its password replaced by xxxxx
	id      string // address/db, to find duplicates
}

// parseMaster turns raw into go-redis options: Dial's own query parameters
// are taken out first (go-redis rejects unknown ones), credentials and TLS
// filled in from the options. Errors match ErrInvalidArgument and never
// quote the password.
func (c *config) parseMaster(i int, raw string) (*master, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		return nil, fmt.Errorf("%w: master %d: %q is not a URL: write %s (or rediss:// for TLS)",
			ErrInvalidArgument, i, hideUserinfo("redis://" + raw)[len("redis://"):], hideUserinfo("redis://"+raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "@") {
			// url.Error quotes the URL, and its inner error may quote a
			// piece of a mangled password (as a port, say): say nothing of it.
			return nil, fmt.Errorf("%w: master %d: %s is not a valid URL (characters such as @ : / %% # ? in a user name or password must be percent-encoded)",
				ErrInvalidArgument, i, hideUserinfo(raw))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: master %d: %q is not a valid URL: %v", ErrInvalidArgument, i, raw, err)
	}
	display := hideUserinfo(raw) // a user name alone is shown
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, fmt.Errorf("%w: master %d: %s: scheme %q: want redis:// or rediss:// (TLS)", ErrInvalidArgument, i, display, u.Scheme)
	}
	q := u.Query()
	p := tlsParams{caFile: q.Get(ParamCA), certFile: q.Get(ParamCert), keyFile: q.Get(ParamKey), serverName: q.Get(ParamServerName)}
	for _, k := range []string{ParamCA, ParamCert, ParamKey, ParamServerName} {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	if u.Scheme == "redis" && (p.any() || c.tlsAsked()) {
		return nil, fmt.Errorf("%w: master %d: %s is plain TCP but TLS settings were given: write rediss://", ErrInvalidArgument, i, display)
	}
	o, err := redis.ParseURL(u.String())
	if err != nil {
		// go-redis quotes pieces of the URL (a path it cannot read as a
		// database number, say), which may hold the password as url.Parse
		// reads it or as a person does ("redis:///:secret@" has none for
		// url.Parse).
		pw, _ := u.User.Password()
		msg := scrub(scrub(err.Error(), pw), readPassword(raw))
		return nil, fmt.Errorf("%w: master %d: %s: %s", ErrInvalidArgument, i, display, msg)
	}
	if o.Password == "" {
		switch {
		case c.credentials:
			o.Password = c.password
			if o.Username == "" {
				o.Username = c.username
			}
		case c.envPassword:
			o.Password = os.Getenv(EnvPassword)
		}
	}
	if u.Scheme == "rediss" {
		p.skipVerify = o.TLSConfig != nil && o.TLSConfig.InsecureSkipVerify
		if o.TLSConfig, err = c.tlsConfig(u.Hostname(), p); err != nil {
			return nil, fmt.Errorf("master %d (%s): %w", i, display, err)
		}
	}
	return &master{opts: o, display: display, id: fmt.Sprintf("%s/%d", o.Addr, o.DB)}, nil
}

// tlsAsked reports whether TLS options were given.
func (c *config) tlsAsked() bool {
	return c.tls != nil || c.caFile != "" || c.certFile != ""
}

// hideUserinfo replaces everything between the scheme and the last "@" but
// the user name with xxxxx: it holds for URLs that do not parse too.
func hideUserinfo(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass || strings.ContainsAny(user, "/?#") {
		user = "" // not a plain user name: hide it all
		if !hasPass && !strings.ContainsAny(rest[:at], "/?#") {
			return raw
		}
	}
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}

// readPassword is the password as a person reads raw, whether url.Parse
// agrees or not: what follows the first ":" after the scheme, up to the
// last "@"; "" when there is none.
func readPassword(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	_, pw, _ := strings.Cut(rest[:at], ":")
	return pw
}

// scrub removes a password, raw and URL-escaped, from a message.
func scrub(msg, password string) string {
	if password == "" {
		return msg
	}
	for _, p := range []string{password, url.QueryEscape(password), url.PathEscape(password)} {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}
