from aifabric.cli import main

main()
