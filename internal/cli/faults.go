package cli

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/acpscope/acpscope/capture"
	"github.com/acpscope/acpscope/fault"
	"github.com/acpscope/acpscope/internal/tap"
	flag "github.com/spf13/pflag"
)

// faultFlags are the flags of every command that forwards traffic and
// can change it on request (issue #17). Off by default: without them the
// traffic is forwarded byte for byte and never framed for interception.
func faultFlags(fs *flag.FlagSet) {
	fs.String("faults", "", "change traffic as the fault plan `PLAN` says (a file or a ready-made plan: "+strings.Join(fault.Builtins(), ", ")+"); every change is recorded")
	fs.Bool("allow-intercept", false, "let the inspector and acpscope send hold, edit and inject messages, over the capture's private control socket")
	durationFlag(fs, "hold-timeout", fault.DefaultHoldTimeout, "a message held longer is forwarded unchanged, with a warning")
}

// Meta notes a run with faults leaves in its capture, so that what was
// done can be told and redone (replay --faults-from).
const (
	noteFaultPlan = "faultPlan" // the plan's text
	noteFaultName = "faults"    // where it came from
	noteFaultSeed = "faultSeed"
	noteIntercept = "intercept"
)

// faultRun is a run's interception: its engine and control socket.
type faultRun struct {
	engine  *fault.Engine
	control *fault.Control
}

// startFaults reads the fault flags and, when one is given, starts the
// engine (and, with --allow-intercept, the control socket beside the
// capture). It returns nil when neither flag was given.
func startFaults(fs *flag.FlagSet, w *capture.Writer) (*faultRun, error) {
	var plan *fault.Plan
	if file, _ := fs.GetString("faults"); file != "" {
		var err error
		if plan, err = fault.Load(file); err != nil {
			return nil, usageErrorf("--faults: %v", err)
		}
	}
	return startPlan(fs, w, plan)
}

// startPlan starts the engine of plan (nil: none), with the
// interception the flags ask for; nil when there is neither.
func startPlan(fs *flag.FlagSet, w *capture.Writer, plan *fault.Plan) (*faultRun, error) {
	allow, _ := fs.GetBool("allow-intercept")
	if plan == nil && !allow {
		return nil, nil
	}
	timeout, _ := fs.GetDuration("hold-timeout")
	opts := fault.Options{AllowIntercept: allow, HoldTimeout: timeout, Warn: warn}
	if plan != nil {
		if !plan.HasSeed {
			plan.Seed = rand.Int64N(1 << 53)
		}
		opts.Plan = plan
		warn(fmt.Sprintf("CHANGING TRAFFIC as the fault plan %s says (%d rules, seed %d); every change is recorded", plan.Name, len(plan.Rules), plan.Seed))
	}
	if w != nil {
		noteFaults(w, opts.Plan, allow)
	}
	run := &faultRun{engine: fault.New(opts)}
	if !allow {
		return run, nil
	}
	if w == nil {
		run.engine.Close()
		return nil, usageErrorf("--allow-intercept needs a capture: its control socket lies beside it (drop --no-capture)")
	}
	ln, sock, err := capture.ListenControl(w.Path(), warn)
	if err != nil {
		run.engine.Close()
		return nil, err
	}
	run.control = fault.Serve(run.engine, ln)
	warn("interception allowed: control socket " + sock)
	return run, nil
}

// recordedPlan is the fault plan a capture's run applied, with the seed
// it ran with, so that applying it again redoes the same faults; "" text
// when the run had none.
func recordedPlan(meta capture.Meta, ref string) (text string, plan *fault.Plan, err error) {
	text, ok := meta.Notes[noteFaultPlan]
	if !ok {
		return "", nil, nil
	}
	plan, err = fault.Parse(ref+" (its recorded plan)", []byte(text))
	if err != nil {
		return text, nil, err
	}
	if seed, err := strconv.ParseInt(meta.Notes[noteFaultSeed], 10, 64); err == nil && !plan.HasSeed {
		plan.Seed, plan.HasSeed = seed, true
	}
	return text, plan, nil
}

func noteFaults(w *capture.Writer, plan *fault.Plan, allow bool) {
	w.UpdateMeta(func(m *capture.Meta) {
		if m.Notes == nil {
			m.Notes = map[string]string{}
		}
		if plan != nil {
			m.Notes[noteFaultName] = plan.Name
			m.Notes[noteFaultPlan] = string(plan.Source)
			m.Notes[noteFaultSeed] = strconv.FormatInt(plan.Seed, 10)
		}
		if allow {
			m.Notes[noteIntercept] = "allowed"
		}
	})
}

// interceptor is the run's hook for a transport; nil without faults.
func (r *faultRun) interceptor() tap.Interceptor {
	if r == nil {
		return nil
	}
	return r.engine
}

// stop releases what is held and closes the control socket.
func (r *faultRun) stop() {
	if r == nil {
		return
	}
	r.engine.Close()
	if r.control != nil {
		r.control.Close()
	}
}
