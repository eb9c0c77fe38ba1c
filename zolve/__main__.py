from zolve.cli import main

main()
