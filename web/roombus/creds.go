package roombus

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Who may use the room bus (issue 35). Whoever reaches a NATS server with
// no authorization can list every room (the bucket's keys), rewrite a
// room's key hash and preset, and read every answer: so the embedded
// server asks for credentials whenever it listens on a port at all,
// loopback included (another user of the host is someone else too). The
// default in-process bus opens no port, and needs none.
//
// The credentials are a NATS user: by default the embedded server makes
// one at its first start and keeps it in the data directory
// (DATA_DIR/nats-creds, mode 0600), so a restart takes the same and the
// other replicas keep theirs; -nats-creds names another file. A replica
// on that bus (-nats-url) gives the same file (-nats-creds), or
// user:password in the URL; an external NATS's own authorization decides
// what its clients give (README, "Outside compose").
//
// A -nats-creds file is one of three things, told apart by its content:
//
//   - a user and password: one line USER:PASSWORD (blank lines and lines
//     starting with # aside), what the embedded server writes;
//   - an nkey seed (a line starting with SU), the user's public key
//     listed in the server's authorization { users: [{nkey: U…}] };
//   - a NATS .creds file (a user JWT and its seed), for an external NATS
//     run with an operator; the embedded server cannot serve one.
//
// Every connection uses nats.go's own options for them (UserInfo,
// NkeyOptionFromSeed, UserCredentials), and the embedded server
// nats-server's (Options.Users, Options.Nkeys).

// CredsFileName is the file in the data directory where the embedded
// server keeps the user it makes.
const CredsFileName = "nats-creds"

// busUser is the user the embedded server makes.
const busUser = "outlierlab"

// creds is a -nats-creds file as read.
type creds struct {
	path string
	kind credsKind
	// user and password, for credsPassword.
	user, password string
	// nkey is the user's public key, for credsNkey.
	nkey string
}

type credsKind int

const (
	credsPassword credsKind = iota + 1
	credsNkey
	credsJWT
)

// credsHint is what to give when NATS refuses the credentials.
const credsHint = "-nats-creds FILE (or the user in -nats-url) must name a user the NATS server accepts: " +
	"an embedded bus's (-nats-listen) is its data directory's " + CredsFileName + ", a cluster's one its authorization lists"

// credsUsage is what a -nats-creds file may hold, for its errors.
const credsUsage = "a line USER:PASSWORD, an nkey seed (SU…), or a NATS .creds file"

// readCreds reads a -nats-creds file.
func readCreds(path string) (*creds, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-nats-creds: cannot read %s: %w", path, err)
	}
	c := &creds{path: path}
	if bytes.Contains(raw, []byte("BEGIN NATS USER JWT")) {
		c.kind = credsJWT
		return c, nil
	}
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		return nil, fmt.Errorf("-nats-creds: %s holds %d lines that are not comments, want one (%s)", path, len(lines), credsUsage)
	}
	line := lines[0]
	if strings.HasPrefix(line, "SU") {
		kp, err := nkeys.FromSeed([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("-nats-creds: %s is not a valid nkey user seed: %w", path, err)
		}
		c.kind = credsNkey
		if c.nkey, err = kp.PublicKey(); err != nil {
			return nil, fmt.Errorf("-nats-creds: %s: %w", path, err)
		}
		return c, nil
	}
	user, password, ok := strings.Cut(line, ":")
	if !ok || user == "" || password == "" {
		return nil, fmt.Errorf("-nats-creds: %s is not %s", path, credsUsage)
	}
	c.kind, c.user, c.password = credsPassword, user, password
	return c, nil
}

// clientOption is the nats.go option that connects with c.
func (c *creds) clientOption() (nats.Option, error) {
	switch c.kind {
	case credsPassword:
		return nats.UserInfo(c.user, c.password), nil
	case credsNkey:
		opt, err := nats.NkeyOptionFromSeed(c.path)
		if err != nil {
			return nil, fmt.Errorf("-nats-creds: %s: %w", c.path, err)
		}
		return opt, nil
	default:
		return nats.UserCredentials(c.path), nil
	}
}

// serve makes the embedded server accept c's user, and only it.
func (c *creds) serve(opts *server.Options) error {
	switch c.kind {
	case credsPassword:
		opts.Users = []*server.User{{Username: c.user, Password: c.password}}
	case credsNkey:
		opts.Nkeys = []*server.NkeyUser{{Nkey: c.nkey}}
	default:
		return fmt.Errorf("-nats-creds: %s is a NATS .creds file (a JWT), which only an external NATS run with an operator checks; the embedded server takes a line USER:PASSWORD or an nkey seed", c.path)
	}
	return nil
}

// ownCreds reads the credentials the embedded server keeps in dir,
// making them at the first start: a user and a random password, written
// with mode 0600 (the file is the password) and renamed into place whole,
// so that a crash never leaves half a file to be read at the next start.
func ownCreds(dir string) (*creds, error) {
	path := filepath.Join(dir, CredsFileName)
	c, err := readCreds(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return c, err
	}
	f, err := os.CreateTemp(dir, CredsFileName+".new-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("room bus: cannot write the bus's credentials in %s: %w", dir, err)
	}
	defer os.Remove(f.Name()) // gone once renamed
	_, err = fmt.Fprintf(f, "# The room bus's user (outlierlab serve -nats-listen made it): give this file\n# to every replica on this bus as -nats-creds, and to no one else.\n%s:%s\n", busUser, rand.Text())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return nil, fmt.Errorf("room bus: cannot write the bus's credentials to %s: %w", path, err)
	}
	return readCreds(path)
}

// Redact is a -nats-url for a log or an error: every URL's password
// (or token) replaced by xxxxx: user:password in the URL is a way to
// give the credentials.
func Redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		switch {
		case err == nil && u.User != nil:
			if _, ok := u.User.Password(); ok {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			} else {
				u.User = url.User("xxxxx") // a token
			}
			parts[i] = u.String()
		case err == nil:
		case strings.Contains(p, "@"):
			// Unparsable: keep the scheme and what follows the last @.
			scheme, _, _ := strings.Cut(p, "://")
			parts[i] = scheme + "://xxxxx@" + p[strings.LastIndex(p, "@")+1:]
		}
	}
	return strings.Join(parts, ",")
}

// urlHasUser says whether any of the URLs carries user information.
func urlHasUser(urls string) bool {
	for _, p := range strings.Split(urls, ",") {
		if u, err := url.Parse(strings.TrimSpace(p)); (err == nil && u.User != nil) || (err != nil && strings.Contains(p, "@")) {
			return true
		}
	}
	return false
}

// authErr says whether err is NATS refusing the credentials given (or
// their absence, or an nkey where it lists none): no retry mends it.
func authErr(err error) bool {
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired) ||
		errors.Is(err, nats.ErrNkeysNotSupported)
}
