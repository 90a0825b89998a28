"""The hooks a grpo-host plugin may implement.

A plugin is a module named by an entry point in the ``grpo_host`` group (a
pack, the distribution, may declare several; ``docs/glossary.md``).  It
implements one or more of the hooks below, decorated with
:data:`grpo_host.hookimpl`.  The hooks are few on purpose: a plugin hands the
host finished objects through a registrar, and the host does the rest
(validation, bookkeeping of which pack registered what, listing).

Every hook here must be documented and tested; ``tests/test_hookspecs.py``
fails when one is added without either.
"""

from __future__ import annotations

import pluggy

PROJECT = "grpo_host"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_rewards(register):
    """Register the reward functions this plugin provides.

    Called once per plugin when the host loads plugins.  Implementations call
    ``register.add_reward(reward)`` (or the shorthand ``register(reward)``)
    for each :class:`grpo_host.Reward` (usually a function decorated with
    :func:`grpo_host.reward`) and return nothing.  If the hook raises,
    nothing it registered is kept and the pack is listed as failed.

    :param register: a :class:`grpo_host.discovery.registry.Registrar` bound to this
        plugin.  ``add_reward`` records the reward together with its pack's
        (distribution's) name and version (``Reward.pack``), so ``grpo-host
        rewards list`` can say which pack each reward came from.  A name that another plugin also
        registers is an error naming both packs, whichever loaded first.
    """


@hookspec
def register_backends(register):
    """Register training backends (engines that run GRPO with an ensemble).

    A backend is a callable ``run(job) -> summary`` that trains a
    :class:`grpo_host.training.train.Job` (a checked
    :class:`grpo_host.training.config.RunConfig` with its normalised rows and
    reward ensemble) and returns a :class:`grpo_host.training.train.Summary`;
    the built-in ones are ``trl`` and ``mlx``, each a
    :class:`grpo_host.training.backends.contract.TrainingBackend`.  A pack adds
    another engine by implementing this hook.

    :param register: a :class:`grpo_host.discovery.registry.Registrar` bound to this
        plugin; ``register.add_backend(name, run, validate=None)`` records the
        backend under ``name`` (the value of ``backend`` in a run
        configuration) with this plugin's pack name and version.
        ``validate(config)``, if given, is called by ``grpo-host train``
        before any data is read or model loaded, so settings the engine
        cannot honour fail at once (raise ``ConfigError``).
    """


@hookspec
def register_monitors(register):
    """Register run monitors: classes that watch every scored batch for reward hacking and collapse.

    A monitor is a class declared with :func:`grpo_host.monitor` whose
    ``observe(batch)`` gets each scored batch (a
    :class:`grpo_host.kinds.monitor.Batch`: prompts, completions, token counts,
    per-reward values, weights, totals, group ids) and returns a
    :class:`grpo_host.kinds.monitor.Report` of metrics and alerts.  The host
    makes one instance per run, so a monitor may keep a window of batches;
    it must stay cheap (no model calls).  A monitor that raises is reported
    and switched off, never taking the run down.

    :param register: a :class:`grpo_host.discovery.registry.Registrar` bound to this
        plugin; ``register.add_monitor(monitor)`` records the monitor under
        its name with this plugin's pack (distribution) name and version, for
        ``grpo-host monitors list`` and the run configuration's ``monitors``.
    """


@hookspec
def register_probes(register):
    """Register audit probes: the attacks and references ``grpo-host audit`` tries on a reward before training.

    Called once per plugin when the host loads plugins, like the other
    hooks.  A reward's author knows its weak spots best, so a pack ships the
    attacks specific to its rewards (a code reward: exiting early, patching
    the harness; a judge: instructions aimed at the judge) and, for a reward
    whose reference is not simply the ``answer`` column, how a row's
    reference is written as a completion (the gold self-check).  Probes are
    declared with :func:`grpo_host.audit.probe`; see ``docs/audit.md``.

    :param register: a :class:`grpo_host.discovery.registry.Registrar` bound to this
        plugin; ``register.add_probe(probe)`` records the probe under its name
        with this plugin's pack (distribution) name and version.  A name another
        plugin also registers is an error naming both packs when the audit
        runs, as for rewards.
    """


@hookspec
def register_environments(register):
    """Register environments: the multi-turn, tool-calling worlds an agent is trained in.

    An environment is a class declared with
    :func:`grpo_host.kinds.environment.environment`: ``reset(row)`` starts a
    rollout for a dataset row, its public methods are the tools the model
    may call (typed, with docstrings), and an optional ``reward()`` scores
    the rollout.  A run names one in its config (``environment``), or each
    row names its own (an ``environment`` column); the host drives it
    through a guarded :class:`grpo_host.kinds.environment.Session` per rollout
    (argument checks, per-call timeouts, output caps).  See
    ``docs/writing-an-environment-pack.md``.

    :param register: a :class:`grpo_host.discovery.registry.Registrar` bound to this
        plugin; ``register.add_environment(env)`` records the environment
        under its name with this plugin's pack (distribution) name and version, for
        ``grpo-host environments list`` and run configs.  A name another
        plugin also registers is an error naming both packs.
        ``register.add_rollout(fn)`` records a function declared with
        :func:`grpo_host.kinds.environment.rollout` (TRL's ``rollout_func``, for
        an external agent framework that generates the rollouts itself), which
        a run names with ``rollout: NAME``.
    """


@hookspec
def register_importers(register):
    """Register importers: readers that turn a judge's problem folder (a Kattis package, a CMS task) into a row.

    Called once per plugin when the host loads plugins, like the other hooks.
    ``grpo-host data import FORMAT FOLDER...`` looks the format up here and
    writes one row per folder, so users train on existing problem archives
    without writing a converter; the host stays generic, and the pack whose
    reward judges the rows knows which columns it reads.  An importer is a
    callable ``read(folder) -> row`` (a :class:`pathlib.Path` in, a dict of
    JSON values out) that raises :class:`grpo_host.DataError` naming the
    folder and the file when the folder cannot be read, or holds something the
    pack's reward cannot judge (never dropping it silently).

    :param register: a :class:`grpo_host.discovery.registry.Registrar` bound to this
        plugin; ``register.add_importer(name, read, description)`` records the
        importer under ``name`` (the ``FORMAT`` of ``data import``) with this
        plugin's pack (distribution) name and version.  A name another plugin
        also registers is an error naming both packs.
    """
