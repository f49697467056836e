"""The LangChain retrieval chain's question, answer and documents: test_langchain.py runs the chain under
OpenInference's instrumentor, instrumented_apps.py the same chain under OpenLLMetry's."""

QUESTION = "How long do I have to return shoes?"
ANSWER = "You have 30 days from delivery."
DOCS = ["Returns are accepted within 30 days of delivery.", "The warranty covers defects for 2 years."]
