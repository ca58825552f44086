"""`casslab k8s render SPEC`: Kubernetes manifests of one campaign cell."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from casslab.cli.common import errors_to_exit, out

app = typer.Typer(help="Kubernetes manifests of a campaign cell: cass-operator, Chaos Mesh, "
                  "casslab-load Jobs.", no_args_is_help=True)


@app.callback()
def _group() -> None:
    # A callback keeps `render` a subcommand (Typer folds a lone command into its group).
    pass


@app.command()
def render(
    spec: Annotated[Path, typer.Argument(help="Experiment spec (YAML).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory to write the "
                                         "manifests into.")] = Path("k8s"),
    cell: Annotated[str | None, typer.Option(help="Cell key, as `casslab experiment plan` "
                                             "prints it (e.g. nodes=2,network=wifi); "
                                             "default: the first cell.")] = None,
    clients: Annotated[int | None, typer.Option(help="Load clients K (pods of the Indexed "
                                                "Job); default: the spec's, else 1.")]
    = None,
    namespace: Annotated[str, typer.Option(help="Namespace of every object.")] = "casslab",
    image: Annotated[str | None, typer.Option("--image", "--load-image",
                                              help="casslab-load image of the Jobs.")] = None,
    server_image: Annotated[str | None, typer.Option(help="Cassandra server image (default: "
                                                     "cass-operator's for the version).")]
    = None,
    cassandra_version: Annotated[str | None, typer.Option(help="serverVersion of the "
                                                          "datacenter.")] = None,
    storage_class: Annotated[str, typer.Option(help="StorageClass of the data volumes.")]
    = "standard",
    storage_size: Annotated[str, typer.Option(help="Data volume size per node.")] = "10Gi",
    racks: Annotated[int, typer.Option(help="Racks of the datacenter.")] = 1,
) -> None:
    """Write cass-operator, Chaos Mesh and casslab-load Job manifests of one cell.

    A CassandraDatacenter (pod resources from the hardware profile, heap,
    cassandra.yaml overrides, racks), one NetworkChaos per conditioned link
    (or group of alike links), a Job for the load phase and an Indexed Job of
    K casslab-load clients (pod I runs --client I/K). Every object is checked
    offline first (Kubernetes schemas, casslab's CRD schemas); nothing is
    applied to a cluster.

    Example: casslab k8s render examples/000-rpi-iot/links.yaml --clients 2
    """
    # The spec and the renderer import the campaign modules: only this command pays.
    from casslab.experiment.spec import load_spec
    from casslab.k8s import RenderOptions, write
    from casslab.k8s import render as render_cell
    from casslab.k8s.render import DEFAULT_LOAD_IMAGE

    with errors_to_exit():
        loaded = load_spec(spec, allow_large=True)
        defaults = RenderOptions()
        manifests = render_cell(loaded, RenderOptions(
            cell=cell, clients=clients, namespace=namespace,
            load_image=image or DEFAULT_LOAD_IMAGE, server_image=server_image,
            server_version=cassandra_version or defaults.server_version,
            storage_class=storage_class, storage_size=storage_size, racks=racks))
        paths = write(manifests, output)
    c = manifests.cell
    out.print(f"cell {c.key}: {c.nodes} x {c.profile.name}, {len(manifests.chaos)} "
              f"NetworkChaos, {c.clients} load client{'s' if c.clients > 1 else ''}",
              highlight=False)
    for p in paths:
        out.print(f"wrote {p}", highlight=False)
