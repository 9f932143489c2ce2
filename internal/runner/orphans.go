package runner

// What an agent leaves behind outside its process group: a process it
// detached into a session of its own (setsid) or through a double fork.
// The group kill does not reach it, so at the end of each attempt gonogo
// finds it by the agent's GONOGO_AGENT_ID, which everything the agent
// starts inherits, and kills it. With gonogo a child subreaper
// (BecomeSubreaper, set by cmd/gonogo), such a process is gonogo's own
// child once its parent is gone, so gonogo collects it when it is dead
// (reapAdopted): nobody else would.
//
// A process that also clears its environment carries no marker and is
// not stopped: nothing then says which agent, if any, it came from (gonogo
// runs editors and condition commands too), and killing a stranger is
// worse than leaving one.

import (
	"os"
	"syscall"
)

// maxKillRounds bounds how many times killMarked looks again for marked
// processes: each round kills every one found, so only a process forked
// between a look and its kill is left for the next round.
const maxKillRounds = 50

// signalMarked sends sig to every live process that carries marker and
// started no earlier than since (the agent's leader), wherever it is, but
// those in done; it returns those it signalled.
func signalMarked(marker string, since uint64, sig syscall.Signal, done map[int]bool) []procStat {
	var hit []procStat
	for _, p := range processes() {
		if !done[p.pid] && !p.dead() && p.start >= since && carries(p.pid, marker) && signalExact(p.pid, p.start, sig) {
			hit = append(hit, p)
		}
	}
	return hit
}

// killMarked SIGKILLs every process that carries marker and started no
// earlier than since, and returns them. It looks again until a look finds
// none it has not killed (at most maxKillRounds times): a process killed
// runs nothing more, so only one forked between a look and the kill of
// its parent can turn up.
func killMarked(marker string, since uint64) []procStat {
	var killed []procStat
	done := map[int]bool{}
	for range maxKillRounds {
		hit := signalMarked(marker, since, syscall.SIGKILL, done)
		if len(hit) == 0 {
			break
		}
		for _, p := range hit {
			done[p.pid] = true
		}
		killed = append(killed, hit...)
	}
	return killed
}

// reapAdopted collects, once they are dead, the processes gonogo adopted
// as their subreaper from the agent whose group was pgid: those in killed
// that are its children now, and the zombies among its children that were
// not started by gonogo itself, including what an earlier attempt left
// dying. gonogo's own children run in its session and either in its group
// or as the leader of one (an agent, collected by its exec.Cmd); a child in
// another session, or a member of another group that does not lead it, was
// adopted, so none is taken from its waiter.
func reapAdopted(pgid int, killed []procStat) {
	self := os.Getpid()
	own, _ := readStat(self)
	reaped := reapKilled(self, pgid, killed)
	for _, p := range processes() {
		if p.ppid == self && p.state == 'Z' && adopted(p, own) && !reaped[p.pid] {
			reap(p.pid)
		}
	}
}

// reapKilled collects the processes in killed that are gonogo's (self's)
// children now, but the agent's leader pgid, and returns them.
func reapKilled(self, pgid int, killed []procStat) map[int]bool {
	reaped := map[int]bool{}
	for _, p := range killed {
		if p.ppid == self && p.pid != pgid {
			reap(p.pid)
			reaped[p.pid] = true
		}
	}
	return reaped
}

// adopted reports whether p, a child of gonogo (own), was adopted rather
// than started by it: it is in another session, or in another group it
// does not lead (see reapAdopted).
func adopted(p, own procStat) bool {
	return p.session != own.session || p.pgrp != own.pgrp && p.pid != p.pgrp
}
