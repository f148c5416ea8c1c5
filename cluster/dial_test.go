package cluster

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9/maintnotifications"
)

// Dial does no I/O: go-redis's maintenance notifications, which resolve the
// host name inside NewClient and send a command on every connection, are
// off.
func TestDialTurnsMaintenanceNotificationsOff(t *testing.T) {
	c, err := Dial(context.Background(), []string{"redis://no-such-host.invalid:6379"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if m := c.clients[0].Options().MaintNotificationsConfig; m == nil || m.Mode != maintnotifications.ModeDisabled {
		t.Fatalf("maintenance notifications: %+v; want disabled", m)
	}
}
