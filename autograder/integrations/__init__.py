"""Ways to run the grader inside other course tools: nbgrader (`nbgrader_bridge`) and Gradescope (`gradescope`)."""
