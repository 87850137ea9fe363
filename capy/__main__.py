from capy.cli import run

run()
