package probe

import (
	"fmt"
	"strings"
)

// Lineage names one continuous history of a master's data: the process
// (run_id, new at every restart), its replication id (master_replid, new at
// every restart, role change and full resync) and its incarnation (a random
// value quorumlock keeps at keys.Incarnation, made again once a FLUSHALL has
// deleted it). A rollback, a failback, a promotion, a restart or a flush
// always gives a new lineage, and none of the three ever comes back
// (docs/safety.md, "Rule V").
//
// For a server that answers as a master, master_replid alone already names
// its process and mastership: Redis draws it at random when the process
// starts and at every promotion, and restores one from disk only into a
// replica. So rule V (Counts, Same) compares the replication id and the
// incarnation, and an acquire asks for INFO's replication section only;
// the run_id is read by probes, written into certificates and guards, and
// compared by the certifications' scripts.
type Lineage struct {
	RunID       string
	ReplID      string
	Incarnation string
}

// String is the lineage as certificates and guards write it: "run_id replid
// incarnation".
func (l Lineage) String() string { return l.RunID + " " + l.ReplID + " " + l.Incarnation }

// Known reports whether the replication id and the incarnation were read:
// what rule V compares (the run_id may be unknown).
func (l Lineage) Known() bool { return l.ReplID != "" && l.Incarnation != "" }

// Same reports whether l and o are one history as rule V judges it: both
// known, with the same replication id and incarnation. A run_id read on
// one side only (a probe's INFO has it, an acquire's does not) does not
// make them differ.
func (l Lineage) Same(o Lineage) bool {
	return l.Known() && o.Known() && l.ReplID == o.ReplID && l.Incarnation == o.Incarnation
}

// Cert is a master's certificate (the value at keys.Cert): the lineage under
// which the master was certified and the certification that did it
// ("scratch S members", "sync nonce", "repair nonce").
type Cert struct {
	Lineage Lineage
	Origin  string
}

// ParseCert reads a certificate; ok is false for "" and for anything that
// is not "run_id replid incarnation origin".
func ParseCert(s string) (c Cert, ok bool) {
	f := strings.SplitN(s, " ", 4)
	if len(f) != 4 || f[0] == "" || f[1] == "" || f[2] == "" || f[3] == "" {
		return Cert{}, false
	}
	return Cert{Lineage: Lineage{RunID: f[0], ReplID: f[1], Incarnation: f[2]}, Origin: f[3]}, true
}

// String is the certificate as stored.
func (c Cert) String() string { return c.Lineage.String() + " " + c.Origin }

// Scratch is the guard of a scratch certification (keys.Scratch): written,
// never deleted, on every member before it is certified.
type Scratch struct {
	Lineage Lineage
	ID      string // the scratch's id, shared by its members
	Members string // the members' indices, comma-separated, in order
}

// ParseScratch reads a scratch guard "run_id replid incarnation scratch ID
// members".
func ParseScratch(s string) (g Scratch, ok bool) {
	f := strings.Fields(s)
	if len(f) != 6 || f[3] != "scratch" {
		return Scratch{}, false
	}
	return Scratch{Lineage: Lineage{RunID: f[0], ReplID: f[1], Incarnation: f[2]}, ID: f[4], Members: f[5]}, true
}

// String is the guard as stored.
func (g Scratch) String() string {
	return fmt.Sprintf("%s scratch %s %s", g.Lineage, g.ID, g.Members)
}

// Origin is the certificate origin of the scratch's members.
func (g Scratch) Origin() string { return "scratch " + g.ID + " " + g.Members }

// ParseLineage reads the replication id and role from the text of INFO with
// the replication section, and the run_id when the server section is there
// too ("" otherwise). The incarnation is a key: the caller reads it.
func ParseLineage(info string) (l Lineage, role string, err error) {
	l.RunID, l.ReplID, role = field(info, "run_id:"), field(info, "master_replid:"), field(info, "role:")
	if l.ReplID == "" || role == "" {
		return Lineage{}, "", fmt.Errorf("INFO has no master_replid or role")
	}
	return l, role, nil
}

// field returns the value of the INFO line starting with name.
func field(info, name string) string {
	i := strings.Index(info, "\n"+name)
	if i < 0 {
		if !strings.HasPrefix(info, name) {
			return ""
		}
		i = 0
	} else {
		i++
	}
	v := info[i+len(name):]
	if j := strings.IndexAny(v, "\r\n"); j >= 0 {
		v = v[:j]
	}
	return v
}

// Counts is rule V: a master's answer counts by itself when its role is
// master and the certificate read in the same atomic step names the lineage
// an INFO sent after it, on the same connection, reports (Same: the
// replication id), with the incarnation read in the same step as the
// certificate.
func Counts(cert string, l Lineage, role string) bool {
	c, ok := ParseCert(cert)
	return ok && role == "master" && c.Lineage.Same(l)
}
