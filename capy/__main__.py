from capy.entry import run

run()
