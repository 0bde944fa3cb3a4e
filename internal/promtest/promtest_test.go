package promtest

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// TestFreePortIsBelowTheEphemeralRange pins why FreePort exists in this
// form: a port from the kernel's ephemeral range can be taken as the local
// port of any outgoing connection before the test's process binds it (the
// scale-out test's backend once failed so), so every port it gives is
// below that range, bindable, and given once.
func TestFreePortIsBelowTheEphemeralRange(t *testing.T) {
	lo := ephemeralFloor()
	seen := map[int]bool{}
	for range 50 {
		p := FreePort(t)
		if p < portFloor || p >= lo {
			t.Fatalf("FreePort gave %d, want one in [%d, %d): below the ephemeral range", p, portFloor, lo)
		}
		if seen[p] {
			t.Fatalf("FreePort gave %d twice", p)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("FreePort gave %d, which does not bind: %v", p, err)
		}
		ln.Close()
	}
}

// TestFreePortSkipsPortsInUseAndPortsGiven pins the two reasons a picked
// port is passed over: something listens on it, or this process gave it
// out already; and that a pick that finds nothing ends in an error, not a
// loop.
func TestFreePortSkipsPortsInUseAndPortsGiven(t *testing.T) {
	held, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", FreePort(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := held.Addr().(*net.TCPAddr).Port
	given := FreePort(t)
	next := FreePort(t) // free now; handed out below only after the other two
	freePorts.mu.Lock()
	delete(freePorts.given, next)
	freePorts.mu.Unlock()
	seq := []int{heldPort, given, next}
	i := 0
	pick := func(int) int { p := seq[i%len(seq)]; i++; return p - portFloor }
	p, err := freePort(pick)
	if err != nil || p != next {
		t.Fatalf("freePort over [in use %d, given %d, free %d] = %d, %v; want %d", heldPort, given, next, p, err, next)
	}
	if i != 3 {
		t.Errorf("freePort picked %d times, want 3 (the held port, the given one, then the free one)", i)
	}
	_, err = freePort(func(int) int { return given - portFloor })
	if err == nil || !strings.Contains(err.Error(), "after 200 tries") {
		t.Fatalf("freePort with only a given port to pick: %v, want an error after 200 tries", err)
	}
}
