// Package benchscripts holds the tests of the bench scripts' shared
// library (scripts/lib): the one judge of a figure against its goal
// (verdict.awk, goal_verdict and figure in benchmarks.sh) and
// check_procs, which refuses a benchmark figure filed under the wrong
// GOMAXPROCS. The scripts themselves run for minutes and only by hand;
// what every one of their verdicts rests on runs here, in go test, with
// the awk and bash of the machine.
package benchscripts
