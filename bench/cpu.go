package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// which is 100 on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// selfCPU is the user + system CPU time of this process so far.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// procCPU is the user + system CPU time of process pid so far, from
// /proc/<pid>/stat (fields 14 and 15, counted after the command name, which
// may contain spaces and parentheses).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStat(string(b))
}

func parseStat(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("bench: malformed /proc stat %q", s)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("bench: short /proc stat %q", s)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bench: malformed utime/stime in /proc stat %q", s)
	}
	return time.Duration(u+st) * clockTick, nil
}

// cpuSnapshot is the client's and the servers' CPU time at one moment.
type cpuSnapshot struct {
	client, servers time.Duration
}

func snapshot(pids []int) (cpuSnapshot, error) {
	var s cpuSnapshot
	var err error
	if s.client, err = selfCPU(); err != nil {
		return s, err
	}
	for _, pid := range pids {
		d, err := procCPU(pid)
		if err != nil {
			return s, fmt.Errorf("cpu of redis-server %d: %w", pid, err)
		}
		s.servers += d
	}
	return s, nil
}
