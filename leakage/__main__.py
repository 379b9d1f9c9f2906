from leakage.cli import main

main()
