// Package mutants measures the fault suite's mutation score: it builds the
// library with one deliberate bug at a time (a Mutant: an exact textual
// replacement of a snippet of the current source), runs the suite's default
// fault mix against each build with a fixed seed and a time budget, and
// tells which checker killed which mutant. `jepsen-like mutants` and `make
// mutants` run it; docs/jepsen-like.md shows the table.
package mutants
