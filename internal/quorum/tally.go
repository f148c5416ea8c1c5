package quorum

import "fmt"

// Tally is one round's count, in the words every report of quorumlock uses
// (an operation's error, Health, redlockctl status and doctor, the fault
// suite's report), so that one fact is said one way.
type Tally struct {
	Granted  int // masters that said yes
	Counted  int // of those, the masters whose yes counts
	Needed   int // the quorum
	Answered int // masters that answered at all (yes, no or an error reply)
	Masters  int // masters in the cluster
}

// String reads "3 granted, 2 count, 3 needed; 4 of 5 answered".
func (t Tally) String() string {
	return fmt.Sprintf("%d granted, %d count, %d needed; %d of %d answered", t.Granted, t.Counted, t.Needed, t.Answered, t.Masters)
}

// Standing says how many masters count by themselves now, outside any round:
// "4 of 5 masters count, 3 needed".
func Standing(counting, masters, needed int) string {
	return fmt.Sprintf("%d of %d masters count, %d needed", counting, masters, needed)
}
