package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twostep/twostep/economy"
	"github.com/twostep/twostep/workflow"
)

// The measured latency of the comparison (DESIGN §11.2): the workloads run
// through the engine again with a model that streams at the latency
// model's pace (Latency), scaled down by latencyScale, and the plain
// loop's calls are played at the same pace one after the other. The ratio
// of the two wall times is measured, not modelled: it includes Stage 2
// starting while Stage 1 still streams, and the engine's own work.
const latencyScale = 0.02 // a modelled second lasts 20 ms

// pace plays replies at the latency model's pace: the fixed latency and
// the input's reading time before the first piece, then the output at
// outputPerSec tokens a second; speed > 1 is a faster model. The cached
// part of an input is modelled per stage with economy.PrefixCache, as the
// report models it.
type pace struct {
	speed map[workflow.Stage]float64 // 1 when absent

	mu     sync.Mutex
	caches map[workflow.Stage]*economy.PrefixCache
	first  time.Time // the first call's start
	last   time.Time // the last call's end
}

func newPace(stage2Speed float64) *pace {
	return &pace{speed: map[workflow.Stage]float64{workflow.StageTwo: stage2Speed}, caches: map[workflow.Stage]*economy.PrefixCache{}}
}

// modelled is a modelled duration in wall time.
func modelled(seconds, speed float64) time.Duration {
	return time.Duration(seconds / speed * latencyScale * float64(time.Second))
}

// play waits as a call of stage sending request (tokens long) would
// before its first token, then hands reply to emit (nil: nobody reads
// it) piece by piece at the output pace.
func (p *pace) play(ctx context.Context, stage workflow.Stage, request string, tokens int, reply string, emit func(string)) error {
	start := time.Now()
	p.mu.Lock()
	if p.first.IsZero() {
		p.first = start
	}
	if p.caches[stage] == nil {
		p.caches[stage] = economy.NewPrefixCache(CostTokens)
	}
	cached := p.caches[stage].Serve(request, tokens)
	speed := p.speed[stage]
	p.mu.Unlock()
	if speed == 0 {
		speed = 1
	}
	at := start.Add(modelled(latencyPerCall+float64(tokens-cached)/uncachedPerSec+float64(cached)/cachedPerSec, speed))
	// Pieces of at least 2 ms of wall time, so sleeping stays accurate.
	perToken := modelled(1.0/outputPerSec, speed)
	size := max(1, int(2*time.Millisecond/max(perToken, 1)))
	runes := []rune(reply)
	for i := 0; i < len(runes) || i == 0; i += 4 * size { // a token is 4 characters
		if err := sleepUntil(ctx, at); err != nil {
			return err
		}
		piece := string(runes[i:min(i+4*size, len(runes))])
		if emit != nil && piece != "" {
			emit(piece)
		}
		at = at.Add(time.Duration(CostTokens(piece)) * perToken)
	}
	if err := sleepUntil(ctx, at); err != nil {
		return err
	}
	p.mu.Lock()
	p.last = time.Now()
	p.mu.Unlock()
	return nil
}

func sleepUntil(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wall is the time from the first call's start to the last call's end.
func (p *pace) wall() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last.Sub(p.first)
}

// MeasuredLatency is a workload's measured latency: the two stages' wall
// time ÷ the plain loop's, on the same model and with Stage 2 on a model
// twice as fast, and the early Stage 2 calls discarded.
type MeasuredLatency struct {
	Ratio, RatioFastStage2 float64
	// Steps counts the steps, Early the Stage 2 calls that overlapped
	// their Stage 1 and Discarded those of them discarded.
	Steps, Early, Discarded int
	// TwoStages and Plain are the wall times (scaled), for the log.
	TwoStages, Plain time.Duration
}

// MeasureLatency runs w paced (twice: Stage 2 on the same model, then on
// one twice as fast) and plays the plain loop's calls of the first run at
// the same pace.
func MeasureLatency(ctx context.Context, w CostWorkload) (MeasuredLatency, error) {
	var out MeasuredLatency
	same := newPace(1)
	run, err := runCost(ctx, w, same)
	if err != nil {
		return out, err
	}
	fast := newPace(2)
	if _, err := runCost(ctx, w, fast); err != nil {
		return out, err
	}
	plain := newPace(1)
	rep := run.Report(costModelName, costModelName)
	steps := map[[2]int]bool{}
	for _, s := range rep.Steps {
		steps[[2]int{s.Round, s.Step}] = true
	}
	for _, c := range economy.PlainLoop(economy.PlainInput{Actions: run.Actions, Messages: run.Messages, Count: CostTokens,
		DocumentText: func(d workflow.Document) string { return run.Docs[d.ID] }}) {
		if !steps[[2]int{c.Round, c.Step}] {
			continue
		}
		if err := plain.play(ctx, workflow.StageOne, c.Request, c.Tokens, c.Output, nil); err != nil {
			return out, err
		}
	}
	out.TwoStages, out.Plain = same.wall(), plain.wall()
	if out.Plain <= 0 {
		return out, fmt.Errorf("%s: the plain loop made no call", w.Name)
	}
	out.Ratio = float64(out.TwoStages) / float64(out.Plain)
	out.RatioFastStage2 = float64(fast.wall()) / float64(out.Plain)
	out.Steps = len(rep.Steps)
	for _, t := range run.Traces {
		if t.Discarded {
			out.Discarded++
		}
		if t.OverlapMs > 0 {
			out.Early++
		}
	}
	return out, nil
}
