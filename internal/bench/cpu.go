package bench

import "github.com/prometheus/procfs"

// busyCPU is the CPU time, in seconds summed over every CPU, that the whole
// machine has spent doing anything but idling since boot (Linux, from
// /proc/stat; ok is false elsewhere). Its difference over a phase is what
// that phase cost every process it kept busy: this one, the embedded NATS
// server in it, and the Postgres backends and background writers working
// for it, which no figure of this process alone would count.
func busyCPU() (seconds float64, ok bool) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, false
	}
	st, err := fs.Stat()
	if err != nil {
		return 0, false
	}
	c := st.CPUTotal
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal, true
}

// cpuMeter measures the machine's busy CPU over a phase; its figures are 0
// where the machine does not say.
type cpuMeter struct {
	start float64
	ok    bool
}

func startCPU() cpuMeter {
	s, ok := busyCPU()
	return cpuMeter{start: s, ok: ok}
}

// msPer1k is the busy CPU since the meter started, in milliseconds per
// thousand of n things done.
func (m cpuMeter) msPer1k(n int) float64 {
	end, ok := busyCPU()
	if !m.ok || !ok || n == 0 {
		return 0
	}
	return (end - m.start) * 1e3 / (float64(n) / 1e3)
}
