"""The reasons a message can need a person now, in the order a verdict reports them."""

SELF_HARM = "self_harm"
FALL = "fall"
PAIN = "pain"
DANGER_AT_HOME = "danger_at_home"
SEVERE_DISTRESS = "severe_distress"
WANTS_TO_LEAVE = "wants_to_leave"
ASKS_FOR_HELP = "asks_for_help"

# When one message says two (a fall and a call for help), the first one here is reported: the
# reason that tells the person who comes the most about what they will find.
ORDER = (SELF_HARM, FALL, PAIN, DANGER_AT_HOME, SEVERE_DISTRESS, WANTS_TO_LEAVE, ASKS_FOR_HELP)
