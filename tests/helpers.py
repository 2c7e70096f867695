"""Small builders for inline scenarios."""

import shutil

from viz.scenario import loads


def scenario(body: str, block="[32]", grid="[1]", params: str = ""):
    head = f"[launch]\nblock = {block}\ngrid = {grid}\n"
    if params:
        head += f"[params]\n{params}\n"
    return loads(head + body, source="inline.toml")


def shared_array(name="s", type_="float", shape="[1024]", extra=""):
    return f'[arrays.{name}]\nspace = "shared"\ntype = "{type_}"\nshape = {shape}\n{extra}\n'


def global_array(name="g", type_="float", shape="[1048576]", extra=""):
    return f'[arrays.{name}]\nspace = "global"\ntype = "{type_}"\nshape = {shape}\n{extra}\n'


def access(at, op="load", when=None, loops=None):
    s = f'[[access]]\nop = "{op}"\nat = "{at}"\n'
    if when:
        s += f'when = "{when}"\n'
    if loops:
        s += "for = { " + ", ".join(f'{k} = "{v}"' for k, v in loops.items()) + " }\n"
    return s


# What the GPU and nvcc tests need (they skip cleanly without it).
HAVE_NVCC = shutil.which("nvcc") is not None and shutil.which("ptxas") is not None


def have_pycuda() -> bool:
    """PyCUDA imports (and so finds a driver)."""
    try:
        import pycuda.driver  # noqa: F401

        return True
    except Exception:
        return False
