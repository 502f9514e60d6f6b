"""recipes/accelerate/*.yaml: every launch config users copy is read by accelerate's own config loader and launcher.

Each config goes through what ``accelerate launch --config_file X -m hf_bert_tasks.cli ...`` does before it starts
processes: ``ClusterConfig.from_yaml_file`` (schema), ``_validate_launch_command`` (defaults merged, flag clashes) and
the launcher's environment (``prepare_multi_gpu_env`` / ``prepare_deepspeed_cmd_env`` / the simple launcher). The
FSDP2 config's environment then builds accelerate's ``FullyShardedDataParallelPlugin`` exactly as the launched
process does, and the layer class it wraps must exist in transformers' BERT. No process is started.
"""

import glob
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = sorted(glob.glob(os.path.join(REPO, "recipes", "accelerate", "*.yaml")))
EXPECTED = {  # file -> (distributed type, mixed precision, processes, machines)
    "single_gpu_bf16.yaml": ("NO", "bf16", 1, 1),
    "multi_process.yaml": ("MULTI_GPU", "no", 2, 1),
    "multi_gpu_ddp.yaml": ("MULTI_GPU", "bf16", 8, 1),
    "multi_node.yaml": ("MULTI_GPU", "bf16", 16, 2),
    "fsdp2.yaml": ("FSDP", "bf16", 8, 1),
    "deepspeed_zero2.yaml": ("DEEPSPEED", "bf16", 8, 1),
    "deepspeed_zero3.yaml": ("DEEPSPEED", "bf16", 8, 1),
}


def launch_env(path):
    """The environment ``accelerate launch --config_file path`` gives the recipe's processes."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils import launch as accelerate_launch

    args = launch_command_parser().parse_args(
        ["--config_file", path, "--main_process_port", "29511", "-m", "hf_bert_tasks.cli", "pretrain"]
    )
    args, defaults, precision_from_config = _validate_launch_command(args)
    if args.use_deepspeed:  # as accelerate.commands.launch.launch_command before its deepspeed_launcher
        fields = list(defaults.deepspeed_config) + (["mixed_precision"] if precision_from_config else [])
        args.deepspeed_fields_from_accelerate_config = ",".join(fields)
        return args, accelerate_launch.prepare_deepspeed_cmd_env(args)[1]
    if args.multi_gpu or args.use_fsdp:
        return args, accelerate_launch.prepare_multi_gpu_env(args)
    return args, accelerate_launch.prepare_simple_launcher_cmd_env(args)[1]


def test_every_documented_config_is_present_and_in_the_readme():
    assert sorted(os.path.basename(p) for p in CONFIGS) == sorted(EXPECTED)
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for name in EXPECTED:
        assert f"recipes/accelerate/{name}" in readme, name


@pytest.mark.parametrize("path", CONFIGS, ids=os.path.basename)
def test_accelerate_reads_the_config_and_prepares_its_launch(path):
    from accelerate.commands.config.config_args import ClusterConfig

    kind, precision, processes, machines = EXPECTED[os.path.basename(path)]
    config = ClusterConfig.from_yaml_file(path)
    assert (config.distributed_type.value, config.mixed_precision, config.num_processes, config.num_machines) == (
        kind,
        precision,
        processes,
        machines,
    )
    args, env = launch_env(path)
    assert env["ACCELERATE_MIXED_PRECISION"] == precision
    if kind == "DEEPSPEED":
        assert env["ACCELERATE_USE_DEEPSPEED"] == "true"
        assert env["ACCELERATE_DEEPSPEED_ZERO_STAGE"] == os.path.basename(path)[-6]  # deepspeed_zero<N>.yaml
    if machines > 1:
        assert (args.nnodes, args.nproc_per_node) == (str(machines), str(processes // machines))


def test_fsdp2_config_builds_the_plugin_the_launched_process_uses(monkeypatch):
    from accelerate.utils import FullyShardedDataParallelPlugin
    from transformers.models.bert import modeling_bert

    _, env = launch_env(os.path.join(REPO, "recipes", "accelerate", "fsdp2.yaml"))
    for key, value in env.items():
        if key.startswith(("FSDP_", "ACCELERATE_")):
            monkeypatch.setenv(key, value)
    plugin = FullyShardedDataParallelPlugin()
    assert plugin.fsdp_version == 2
    assert plugin.reshard_after_forward is True
    assert plugin.transformer_cls_names_to_wrap == ["BertLayer"]
    assert hasattr(modeling_bert, "BertLayer")
    assert plugin.state_dict_type.name == "FULL_STATE_DICT"
