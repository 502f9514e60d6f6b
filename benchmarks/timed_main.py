"""Run a script's or module's ``main()`` in this (fresh) process, timing its imports and its ``main`` separately.

    python benchmarks/timed_main.py --report R.json [--count_tokens] --script PATH -- ARGS...
    python benchmarks/timed_main.py --report R.json [--count_tokens] --module hf_bert_tasks.cli -- ARGS...

The same wrapper runs both sides of a subprocess benchmark (e.g. transformers' ``run_glue.py`` and
``hf-bert-tasks finetune``), so both are started, timed and counted the same way. ``ARGS`` become ``sys.argv[1:]``
exactly as on the command line; the target is imported (its top-level code, i.e. its imports, is ``import_s``) and
then its ``main()`` is called (``main_s``). A script's folder is put first on ``sys.path`` as ``python PATH`` would.

``--count_tokens`` registers a forward pre-hook on every model a ``transformers.Trainer`` is built with and counts
the token positions the model processes (``attention_mask`` elements) and the real ones among them (its sum),
separately for training and evaluation: the padding fraction is ``1 - real / positions``. The count does not change
what the target computes.

``--time_steps`` also times, inside the same run, every ``Trainer.training_step`` (forward + backward of one
micro-batch) and every optimizer step (torch's global optimizer step hooks): their sum ``step_limit_s`` is the time a
run cannot go below with these batches and this model (no data loading, collation, evaluation, logging or saving),
the limit that the whole-process time is compared with.

``--phases`` (issue 42 item 2) adds a ``TrainerCallback`` (:class:`PhaseTimer`) to every Trainer the target builds
and splits the run into phases by the Trainer's own events (``torch.cuda.synchronize()`` at each on CUDA, so a phase
holds its kernels; the same for both sides of a comparison):

* ``startup_s``: this wrapper's start -> ``on_train_begin`` (imports, argument parsing, data loading and
  tokenization, model load, Trainer construction);
* ``data_s``: ``on_train_begin`` / ``on_step_end`` -> the next ``on_step_begin``, less evaluation: fetching and
  collating the next batch (and the loop's logging, which runs there too);
* ``forward_backward_s``: ``on_step_begin`` -> ``on_pre_optimizer_step`` (forward, backward, gradient clipping);
* ``optimizer_s``: ``on_pre_optimizer_step`` -> ``on_optimizer_step`` (the optimizer step);
* ``step_end_s``: ``on_optimizer_step`` -> ``on_step_end`` (scheduler step, zero_grad);
* ``eval_s``: the ``eval_runtime`` of every ``on_evaluate`` during training;
* ``after_train_s``: the last ``on_step_end`` -> the target's ``main()`` returning (final save, evaluation, writes).

``--memory`` (issue 57 item 3) splits the process's peak resident set size (RSS, Linux) by phase: the kernel's
high-water mark ``VmHWM`` of ``/proc/self/status`` is read, then reset to the current RSS by writing ``5`` to
``/proc/self/clear_refs`` (proc(5)), when ``transformers.Trainer.train`` is entered, when it returns and when the
target's ``main()`` returns. ``memory`` in the report: ``load_peak_mib`` (start -> ``train()``: imports, data
reading and tokenization, model load, Trainer construction), ``train_peak_mib`` (inside ``train()``: the training
steps), ``after_train_peak_mib`` (``train()`` returning -> ``main()`` returning: the evaluation, its
post-processing, saving and writing), and the RSS at each boundary (``rss_at_train_begin_mib``,
``rss_at_train_end_mib``, ``rss_at_end_mib``); ``load_s`` / ``train_s`` / ``after_train_s`` are the wall seconds of
the same phases. A Trainer whose ``train()`` is never called leaves everything in ``load_peak_mib``.

The report (JSON) has ``import_s``, ``main_s`` and, with ``--count_tokens``, ``tokens``; with ``--time_steps``,
``step_limit_s``, ``training_step_s``, ``optimizer_step_s`` and ``training_steps``; with ``--phases``, ``phases``
(the seconds above and ``steps``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import time


def install_token_counter(counts: dict) -> None:
    """Patch ``transformers.Trainer.__init__`` so every Trainer's model counts its input positions (see module doc)."""
    import transformers

    init = transformers.Trainer.__init__

    def hook(module, args, kwargs):
        mask = kwargs.get("attention_mask")
        ids = kwargs.get("input_ids", args[0] if args else None)
        if mask is None and ids is None:
            return
        phase = counts["train" if module.training else "eval"]
        phase["positions"] += int(mask.numel() if mask is not None else ids.numel())
        phase["real"] += int(mask.sum() if mask is not None else ids.numel())
        phase["batches"] += 1

    def counting_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if not getattr(self.model, "_bench_counted", False):
            self.model.register_forward_pre_hook(hook, with_kwargs=True)
            self.model._bench_counted = True

    transformers.Trainer.__init__ = counting_init


def phase_timer_class():
    """The :class:`PhaseTimer` callback class (built on first use: importing transformers is part of what is timed)."""
    import torch
    from transformers import TrainerCallback

    class PhaseTimer(TrainerCallback):
        """Adds each phase's seconds to ``phases`` (see the module doc); one instance per Trainer."""

        def __init__(self, phases: dict, start: float):
            self.phases, self.start = phases, start
            self.mark = None  # (event, time) of the last event
            self.eval_since_mark = 0.0

        def _now(self, args) -> float:
            if torch.cuda.is_available() and getattr(args, "device", None) is not None and args.device.type == "cuda":
                torch.cuda.synchronize()
            return time.perf_counter()

        def _close(self, phase: str, now: float) -> None:
            if self.mark is not None:
                self.phases[phase] += now - self.mark[1]

        def on_train_begin(self, args, state, control, **kwargs):
            now = self._now(args)
            self.phases["startup_s"] += now - self.start
            self.mark = ("train_begin", now)

        def on_step_begin(self, args, state, control, **kwargs):
            now = self._now(args)
            if self.mark is not None:
                self.phases["data_s"] += now - self.mark[1] - self.eval_since_mark
            self.eval_since_mark = 0.0
            self.mark = ("step_begin", now)

        def on_pre_optimizer_step(self, args, state, control, **kwargs):
            now = self._now(args)
            self._close("forward_backward_s", now)
            self.mark = ("pre_optimizer", now)

        def on_optimizer_step(self, args, state, control, **kwargs):
            now = self._now(args)
            self._close("optimizer_s", now)
            self.mark = ("optimizer", now)

        def on_step_end(self, args, state, control, **kwargs):
            now = self._now(args)
            self._close("step_end_s", now)
            self.phases["steps"] += 1
            self.mark = ("step_end", now)
            self.phases["_last_step_end"] = now

        def on_evaluate(self, args, state, control, metrics=None, **kwargs):
            seconds = float((metrics or {}).get("eval_runtime", 0.0))  # any prefix: first *_runtime key
            if not seconds:
                seconds = next((float(v) for k, v in (metrics or {}).items() if k.endswith("_runtime")), 0.0)
            self.phases["eval_s"] += seconds
            self.eval_since_mark += seconds

    return PhaseTimer


def install_phase_timer(phases: dict, start: float) -> None:
    """Patch ``transformers.Trainer.__init__`` to add a :class:`PhaseTimer` to every Trainer (module doc)."""
    import transformers

    timer_cls = phase_timer_class()
    init = transformers.Trainer.__init__

    def timed_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.add_callback(timer_cls(phases, start))

    transformers.Trainer.__init__ = timed_init


def install_step_timer(times: dict) -> None:
    """Patch ``transformers.Trainer.training_step`` and hook every optimizer step to add their wall time to
    ``times`` (see module doc). The timed code runs unchanged."""
    import transformers
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    training_step = transformers.Trainer.training_step

    def timed_training_step(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return training_step(self, *args, **kwargs)
        finally:
            times["training_step_s"] += time.perf_counter() - start
            times["training_steps"] += 1

    started = []

    def pre(_optimizer, _args, _kwargs):
        started.append(time.perf_counter())

    def post(_optimizer, _args, _kwargs):
        if started:
            times["optimizer_step_s"] += time.perf_counter() - started.pop()

    transformers.Trainer.training_step = timed_training_step
    register_optimizer_step_pre_hook(pre)
    register_optimizer_step_post_hook(post)


def _status_mib(field: str) -> float:
    """``field`` (``VmHWM``, ``VmRSS``) of ``/proc/self/status`` in MiB."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise OSError(f"/proc/self/status has no {field} line; --memory needs Linux")


def memory_mark(memory: dict, phase: str) -> None:
    """Record the high-water mark of the phase that ends now as ``<phase>_peak_mib`` and its wall seconds as
    ``<phase>_s``, then reset the mark to the current RSS (``/proc/self/clear_refs``, proc(5)) for the next phase."""
    now = time.perf_counter()
    memory[f"{phase}_peak_mib"] = _status_mib("VmHWM")
    memory[f"{phase}_s"] = now - memory.pop("_since")
    with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
        f.write("5")
    memory["_since"] = time.perf_counter()


def install_memory_phases(memory: dict) -> None:
    """Patch ``transformers.Trainer.train`` to close the ``load`` phase on entry and the ``train`` phase on return
    (see module doc); the training runs unchanged."""
    import transformers

    train = transformers.Trainer.train

    def marked_train(self, *args, **kwargs):
        memory["rss_at_train_begin_mib"] = _status_mib("VmRSS")
        memory_mark(memory, "load")
        try:
            return train(self, *args, **kwargs)
        finally:
            memory["rss_at_train_end_mib"] = _status_mib("VmRSS")
            memory_mark(memory, "train")

    transformers.Trainer.train = marked_train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--script", help="a Python file with a main()")
    target.add_argument("--module", help="an importable module with a main()")
    parser.add_argument("--report", required=True, help="JSON file written at the end")
    parser.add_argument("--count_tokens", action="store_true")
    parser.add_argument("--time_steps", action="store_true", help="time training steps and optimizer steps")
    parser.add_argument("--phases", action="store_true", help="per-phase seconds by Trainer events (module doc)")
    parser.add_argument("--memory", action="store_true", help="peak RSS per phase: load, train, after (module doc)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="-- then the target's arguments")
    opts = parser.parse_args()
    args = opts.args[1:] if opts.args[:1] == ["--"] else opts.args
    counts = {p: {"positions": 0, "real": 0, "batches": 0} for p in ("train", "eval")}
    start = time.perf_counter()
    if opts.count_tokens:
        install_token_counter(counts)
    steps = {"training_step_s": 0.0, "optimizer_step_s": 0.0, "training_steps": 0}
    if opts.time_steps:
        install_step_timer(steps)
    phases = dict.fromkeys(("startup_s", "data_s", "forward_backward_s", "optimizer_s", "step_end_s", "eval_s"), 0.0)
    phases["steps"] = 0
    if opts.phases:
        install_phase_timer(phases, start)
    memory: dict = {"_since": start}
    if opts.memory:
        _status_mib("VmHWM")  # fails early off Linux
        install_memory_phases(memory)
    if opts.script:
        path = os.path.abspath(opts.script)
        sys.path.insert(0, os.path.dirname(path))
        sys.argv = [path, *args]
        spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        sys.argv = [opts.module, *args]
        module = importlib.import_module(opts.module)
    imported = time.perf_counter()
    status = module.main()
    done = time.perf_counter()
    report = {"import_s": imported - start, "main_s": done - imported}
    if opts.count_tokens:
        report["tokens"] = counts
    if opts.time_steps:
        report.update(steps, step_limit_s=steps["training_step_s"] + steps["optimizer_step_s"])
    if opts.memory:
        memory["rss_at_end_mib"] = _status_mib("VmRSS")
        memory_mark(memory, "after_train" if "train_s" in memory else "load")
        memory.pop("_since")
        report["memory"] = memory
    if opts.phases:
        last = phases.pop("_last_step_end", None)
        phases["after_train_s"] = done - last if last is not None else 0.0
        report["phases"] = phases
    with open(opts.report, "w", encoding="utf-8") as f:
        json.dump(report, f)
    if isinstance(status, int) and status:
        sys.exit(status)


if __name__ == "__main__":
    main()
