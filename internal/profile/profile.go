// Package profile writes a CPU profile of the running process when the
// PINSEAL_CPUPROFILE environment variable names a file prefix.
package profile

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// Env names the file prefix of CPU profiles: each process (the verifier
// and each render child) writes PREFIX.PID, read with `go tool pprof`.
const Env = "PINSEAL_CPUPROFILE"

// FromEnv starts a CPU profile when Env is set and returns the function
// that ends it (a no-op otherwise). A profile that cannot start is
// reported on stderr and the program runs on: it is a measuring aid,
// never a reason to fail.
func FromEnv() (stop func()) {
	prefix := os.Getenv(Env)
	if prefix == "" {
		return func() {}
	}
	name := fmt.Sprintf("%s.%d", prefix, os.Getpid())
	f, err := os.Create(name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", Env, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", Env, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// ChildEnv is the environment entry that passes Env on to a child
// process whose environment is otherwise cleared; nil when Env is unset.
func ChildEnv() []string {
	if v, ok := os.LookupEnv(Env); ok && v != "" {
		return []string{Env + "=" + v}
	}
	return nil
}
