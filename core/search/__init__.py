"""Search strategies that propose operators, behind one ask/tell interface."""
