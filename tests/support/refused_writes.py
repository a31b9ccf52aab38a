"""A write the database refuses part-way through an exchange, as a full disk would.

Installed with Django's `execute_wrapper` on the real connection. The statement named is sent to
a table that does not exist, so the database itself refuses it after running what came before it
(on PostgreSQL an exchange's writes travel as one query string: the refusal comes from inside
it), and those earlier writes have to be rolled back.
"""


class RefusedWrite:
    def __init__(self, statement: str, *, active: bool = True):
        self.statement = statement  # e.g. "INSERT INTO repetition_tracking", "UPDATE people"
        self.active = active

    def __call__(self, execute, sql, params, many, context):
        if self.active and self.statement in sql:
            sql = sql.replace(self.statement, f"{self.statement}_refused", 1)
        return execute(sql, params, many, context)

    def start(self):
        self.active = True

    def stop(self):
        self.active = False
