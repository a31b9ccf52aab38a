#!/usr/bin/env python
"""Write bench/repetition/train_pairs.jsonl: the training pairs of the repeat check's adapter.

    python3 bench/repetition_train_data.py          # (re)write the file; plain Python, no Django

The pairs are built from concerns written here (not from bench/repetition/pairs.jsonl, the
evaluation set): each concern is one worry or request a person living with dementia comes back
to, said in many ways (short, rambling, fragments, typos, British and American words, indirect
statements, filler); some concerns are templates over a person, a thing, a place or a pet.
Repeats (label 1) pair two wordings of one concern; hard negatives (label 0) pair wordings of two
concerns that a plain sentence model finds close: the same frame asking for something else, a
different person, thing or place, the opposite (in / out, on / off, want / don't want), or the same
topic with a different question.

Each row has the fields of pairs.jsonl and `concerns`: the names of the two messages' concerns
(the trainer never uses two messages of one concern as each other's negatives).

Kept apart from the evaluation set: a message that, normalised (lower case, letters and digits
only), is also a message of pairs.jsonl is dropped here, and tests/memory/test_repeat_adapter.py
fails if one is left. Deterministic (seeded sampling).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "repetition" / "train_pairs.jsonl"
EVAL = ROOT / "bench" / "repetition" / "pairs.jsonl"
SEED = 17
POSITIVES_PER_CONCERN = 36
NEGATIVES_PER_LINK = 4


def normalise(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


# --- Concerns: name → (category, wordings) ---------------------------------------------------

CONCERNS: dict[str, tuple[str, list[str]]] = {}


def concern(name: str, category: str, wordings: list[str]) -> None:
    CONCERNS[name] = (category, list(dict.fromkeys(wordings)))


concern(
    "go_home",
    "home",
    [
        "I need to be getting back to my own house now.",
        "Take me back to my place, would you?",
        "this isnt my home, i want to leave and go back to mine",
        "Home. I want home.",
        "When are we going back to my house?",
        "I don't live here, love, I should be at home by now.",
        "Could somebody drive me home please",
        "I'd like to go back to where I live.",
        "My own bed is at home, I want to get back there.",
        "Right, I'm off home now, where's the door?",
        "i wanna go hoem",
        "I've been here long enough, it's time I went home.",
        "Will you take me back to my house? I don't belong here.",
        "Let me go home, please, I'm asking nicely.",
    ],
)
concern(
    "stay_here",
    "home",
    [
        "I'm happy to stay here tonight.",
        "I don't want to go home, I like it here.",
        "Can I stay here a bit longer?",
        "I'd rather stay put, thank you.",
        "I'll stop here tonight if that's alright.",
    ],
)
concern(
    "where_live",
    "home",
    [
        "What's my address again?",
        "Which street do I live on?",
        "Where do I live now?",
        "I can't remember my address.",
        "Tell me where my house is, what road is it on?",
        "what road do i live on",
    ],
)
concern(
    "house_safe",
    "home",
    [
        "Is my house alright with nobody in it?",
        "Who's looking after my house while I'm away?",
        "I hope nobody has broken into my house.",
        "Is somebody keeping an eye on my place?",
        "Has anyone checked on my house?",
    ],
)
concern(
    "where_am_i",
    "place",
    [
        "What is this place?",
        "Where have you brought me?",
        "I don't know where I am.",
        "Which building is this?",
        "Where on earth am I, what is this?",
        "what is this place i dont recognise it",
        "I don't know this place at all, where are we?",
        "Where are we? Nothing looks familiar.",
        "Whose house is this?",
        "Is this a hotel? Where am I?",
    ],
)
concern(
    "how_got_here",
    "place",
    [
        "How did I get here?",
        "Who brought me here?",
        "I don't remember coming here, how did I arrive?",
        "How did I end up in this place?",
        "Did somebody drive me here?",
    ],
)
concern(
    "is_hospital",
    "place",
    [
        "Is this a hospital?",
        "Am I in hospital? Am I ill?",
        "Why am I in a hospital?",
        "Is this place a hospital or a home?",
    ],
)
concern(
    "what_day",
    "time",
    [
        "What day of the week is it?",
        "Which day is it today?",
        "Is it Monday or Tuesday today?",
        "Remind me what day it is.",
        "what day is today",
        "I've lost track of the days, what day are we on?",
        "Is it the weekend? What day is it?",
        "Today is which day?",
        "I don't even know what day it is.",
    ],
)
concern(
    "what_time",
    "time",
    [
        "What's the time now?",
        "Have you got the time?",
        "Is it late? What time is it?",
        "Tell me the time, would you?",
        "what time is it now",
        "How late is it?",
        "What o'clock is it?",
        "Is it nearly dinner time? What's the time?",
        "I haven't got my watch on, what time is it?",
    ],
)
concern(
    "what_year",
    "time",
    [
        "What year is it?",
        "Which year are we in now?",
        "Is it still 1985?",
        "Tell me the year.",
        "What year is it now, I've forgotten.",
    ],
)
concern(
    "morning_or_night",
    "time",
    [
        "Is it morning or evening?",
        "Is it night time now?",
        "Is it the morning?",
        "Is it day or night?",
        "Has it got dark yet? Is it evening?",
    ],
)
concern(
    "when_lunch",
    "meals",
    [
        "When's lunch?",
        "What time do we have lunch?",
        "Is it lunchtime yet?",
        "How long until lunch is served?",
        "Are we having lunch soon?",
        "is lunch ready yet",
        "When are they bringing the lunch round?",
        "It must be nearly lunchtime, is it?",
    ],
)
concern(
    "when_dinner",
    "meals",
    [
        "When's dinner?",
        "What time is supper tonight?",
        "Is it nearly time for our evening meal?",
        "When do we eat tonight?",
        "Is tea ready? The evening meal, I mean.",
        "How long till dinner?",
    ],
)
concern(
    "hungry",
    "meals",
    [
        "I'm starving.",
        "Can I have something to eat?",
        "I'm ever so hungry.",
        "Is there any food? My stomach is rumbling.",
        "I could eat a horse.",
        "Could I get a bite to eat?",
        "im hungry can i have some food",
        "I haven't eaten all day, I'm famished.",
        "Have you got anything I could eat?",
        "Give us a sandwich or something, I'm hungry.",
    ],
)
concern(
    "thirsty",
    "meals",
    [
        "I'm thirsty.",
        "Can I have a drink?",
        "Could I have a glass of water?",
        "My mouth is dry, is there anything to drink?",
        "I need a drink of something.",
        "im so thirsty",
        "Any chance of a drink?",
    ],
)
concern(
    "cup_of_tea",
    "meals",
    [
        "Can I have a cup of tea?",
        "I'd love a cuppa.",
        "Will you make me a brew?",
        "Put the kettle on, I fancy a tea.",
        "Any chance of a cup of tea, love?",
        "cup of tea please",
    ],
)
concern(
    "had_breakfast",
    "meals",
    [
        "Have I had my breakfast?",
        "Did I eat breakfast this morning?",
        "I don't think I've had any breakfast yet.",
        "Did somebody give me breakfast today?",
        "Have I eaten this morning?",
    ],
)
concern(
    "what_breakfast",
    "meals",
    [
        "What did I have for breakfast?",
        "What was it I ate this morning?",
        "What was breakfast today?",
        "Can you remember what I had for breakfast?",
    ],
)
concern(
    "took_tablets",
    "medicine",
    [
        "Have I taken my pills?",
        "Did I have my medication this morning?",
        "Have I had my tablets today?",
        "I can't remember if I took my medicine.",
        "Did I take my pills already?",
        "have i had my meds",
        "Did somebody give me my tablets this morning?",
        "I don't think I've had my medication.",
    ],
)
concern(
    "time_tablets",
    "medicine",
    [
        "Is it time for my medicine?",
        "Shouldn't I be having my pills about now?",
        "When do I take my tablets?",
        "Are my tablets due?",
        "I think it's time for my medication.",
        "when are my pills due",
        "What time do I have my medicine?",
    ],
)
concern(
    "tablets_for",
    "medicine",
    [
        "What are these tablets for?",
        "Why do I have to take these pills?",
        "What does this medicine do?",
        "What are all these pills for?",
        "Why am I on these tablets?",
    ],
)
concern(
    "refuse_tablets",
    "medicine",
    [
        "I don't want my tablets.",
        "I'm not taking those pills.",
        "Take that medicine away, I won't have it.",
        "I refuse to take any more tablets.",
    ],
)
concern(
    "tablets_sick",
    "medicine",
    [
        "These tablets make me feel sick.",
        "The pills upset my stomach.",
        "My medicine gives me a funny tummy.",
        "I feel queasy after my tablets.",
    ],
)
concern(
    "no_money",
    "money",
    [
        "I haven't got any money.",
        "Where's all my money gone?",
        "I've got no cash on me.",
        "I'm skint, I haven't a penny.",
        "Somebody's had my money, it's all gone.",
        "i have no money at all",
        "How am I going to pay, I've no money?",
        "I had money in my purse and now it's empty.",
        "My money's disappeared.",
    ],
)
concern(
    "pay_bills",
    "money",
    [
        "Have I paid the bills?",
        "The gas bill needs paying.",
        "I must pay the electric bill.",
        "Did somebody pay my bills this month?",
        "I'm worried about the bills, are they paid?",
        "have the bills been paid",
    ],
)
concern(
    "pension",
    "money",
    [
        "Has my pension come in?",
        "When do I get my pension?",
        "I need to collect my pension from the post office.",
        "Is my pension in the bank yet?",
        "Pension day, is it today?",
    ],
)
concern(
    "pay_for_here",
    "money",
    [
        "Who's paying for me to stay here?",
        "How much does this place cost?",
        "I can't afford to stay here.",
        "Who pays for all this?",
    ],
)
concern(
    "go_work",
    "work",
    [
        "I need to get to the office.",
        "I've got to go to work.",
        "I'll be late for my shift.",
        "Where's my bag, I have to go to work.",
        "They'll be expecting me at work.",
        "I must get going, work starts at eight.",
        "i have to go to work now",
        "The boss will have my head if I'm late in.",
        "Can you drive me to work?",
        "I'm due at the factory this morning.",
        "Got to get to the shop, I open up at nine.",
    ],
)
concern(
    "retired",
    "work",
    [
        "I retired years ago.",
        "I don't work any more.",
        "I finished working a long time ago.",
        "I gave up my job when I was sixty.",
    ],
)
concern(
    "old_job",
    "work",
    [
        "I was a nurse for thirty years.",
        "I used to work on the railways.",
        "I was a teacher once, you know.",
        "I worked in the mill all my life.",
    ],
)
concern(
    "collect_children",
    "children",
    [
        "I have to collect the kids from school.",
        "Who's picking the children up?",
        "The school will be out soon, I must fetch the children.",
        "I need to get the little ones from school.",
        "school pick up, i need to go",
        "I'll be late for the school run.",
        "The children will be waiting at the school gate.",
    ],
)
concern(
    "where_children",
    "children",
    [
        "Where are the children?",
        "Where have the kids gone?",
        "Are the children alright? Where are they?",
        "I haven't seen the kids all day.",
        "where are my kids",
        "Has anyone seen my children?",
    ],
)
concern(
    "children_fed",
    "children",
    [
        "Have the children had their tea?",
        "Did the kids get fed?",
        "Somebody needs to make the children's dinner.",
        "Have the little ones eaten?",
    ],
)
concern(
    "bed",
    "daily",
    [
        "I'd like to turn in now.",
        "I'm ready for my bed.",
        "Can I get into bed now?",
        "I need to have a sleep.",
        "I'm worn out, I want to go to sleep.",
        "Time I was in bed, isn't it?",
        "im tired i want my bed",
        "Can you help me upstairs to bed?",
        "Let me get my head down for a bit.",
        "I'm so tired, I just want to sleep.",
        "Could I rest on the bed for a while?",
        "My eyes are closing, I want to go to bed.",
        "Can I have a nap?",
    ],
)
concern(
    "cant_sleep",
    "daily",
    [
        "I can't sleep.",
        "I've been lying awake all night.",
        "I couldn't get to sleep last night.",
        "Sleep won't come.",
        "I keep waking up in the night.",
    ],
)
concern(
    "get_up",
    "daily",
    [
        "I want to get up now.",
        "Can I get out of bed?",
        "Help me up, I don't want to lie here.",
        "I've been in bed too long, I want to get up.",
    ],
)
concern(
    "outside",
    "daily",
    [
        "I'd like to go out for a bit.",
        "Can I step outside?",
        "Let me out into the garden.",
        "I need to get out of this room, can we go out?",
        "Can we go for a walk?",
        "I'm stuck inside all day, I want to go out.",
        "Take me outdoors please.",
        "It's stuffy in here, can I go out and breathe?",
        "i want to go outside",
        "Shall we have a stroll round the garden?",
        "I need a breath of air, open the door and let me out.",
        "Can I sit out in the sunshine?",
    ],
)
concern(
    "weather",
    "daily",
    [
        "Is it cold outside?",
        "What's the weather like today?",
        "Is it raining out there?",
        "Is it sunny out?",
        "Will I need a coat outside?",
    ],
)
concern(
    "who_outside",
    "daily",
    [
        "Who is that outside?",
        "There's someone in the garden.",
        "Who's that at the window?",
        "I can see a man outside, who is it?",
    ],
)
concern(
    "toilet",
    "daily",
    [
        "I need the loo.",
        "Where's the toilet?",
        "I need to go to the bathroom.",
        "Can you take me to the lavatory?",
        "I'm desperate for a wee.",
        "where is the restroom",
        "I need the toilet, quick.",
        "Which way is the ladies?",
        "I have to spend a penny.",
        "Where do I go to the toilet here?",
    ],
)
concern(
    "bath",
    "daily",
    [
        "I'd like a bath.",
        "Can I have a shower?",
        "I need a wash, I feel grubby.",
        "When can I have my bath?",
    ],
)
concern(
    "tv_on",
    "daily",
    [
        "Put the telly on.",
        "Can we watch some television?",
        "Switch the TV on for me.",
        "I want to watch my programme, turn it on.",
        "Is there anything on the box? Put it on.",
        "turn on the tv please",
    ],
)
concern(
    "tv_off",
    "daily",
    [
        "Turn the telly off.",
        "Switch that television off, it's too loud.",
        "I don't want the TV on.",
        "Can you turn off the TV?",
    ],
)
concern(
    "light_on",
    "daily",
    [
        "Put the light on.",
        "It's dark, switch the lights on.",
        "Can you turn the lamp on?",
        "I can't see, put the big light on.",
    ],
)
concern(
    "light_off",
    "daily",
    [
        "Turn the light off.",
        "Switch the lights off, I want to sleep.",
        "The light is too bright, turn it off.",
        "Can you put the lamp off?",
    ],
)
concern(
    "door_locked",
    "daily",
    [
        "Is the front door locked?",
        "Did I lock the door?",
        "Have you locked up for the night?",
        "I'm not sure I locked the door.",
        "Can you check the door is locked?",
    ],
)
concern(
    "window_shut",
    "daily",
    [
        "Is the window shut?",
        "Did someone close the window?",
        "Is that window closed?",
        "Can you check the windows are shut?",
    ],
)
concern(
    "heating",
    "daily",
    [
        "Is the heating on?",
        "Can you turn the heating up?",
        "Put the radiators on, would you?",
        "Has someone turned the heating off?",
    ],
)
concern(
    "cold",
    "feelings",
    [
        "I'm freezing.",
        "I feel so cold.",
        "It's chilly in here, I'm shivering.",
        "My hands are like ice.",
        "Brr, I'm cold.",
        "im really cold",
        "I can't get warm.",
    ],
)
concern(
    "hot",
    "feelings",
    [
        "I'm too hot.",
        "It's boiling in here.",
        "I'm sweating, it's so warm.",
        "I feel far too hot.",
        "It's roasting in this room.",
    ],
)
concern(
    "scared",
    "feelings",
    [
        "I'm frightened.",
        "I feel scared.",
        "Something's not right, I'm afraid.",
        "I'm so scared, please stay.",
        "im frightend",
        "I'm terrified, I don't know why.",
        "I feel nervous and scared.",
    ],
)
concern(
    "lonely",
    "feelings",
    [
        "I'm lonely.",
        "Nobody comes to see me.",
        "I feel so alone.",
        "I've got no one to talk to.",
        "Everyone's forgotten about me.",
        "Nobody visits me any more.",
        "i feel lonely",
    ],
)
concern(
    "sad",
    "feelings",
    [
        "I feel sad today.",
        "I'm so unhappy.",
        "I just want to cry.",
        "I feel really down.",
        "Everything makes me miserable.",
    ],
)
concern(
    "unwell",
    "feelings",
    [
        "I don't feel well.",
        "I feel poorly.",
        "I think I'm ill.",
        "I feel rotten today.",
        "I'm not well at all.",
    ],
)
concern(
    "pain",
    "feelings",
    [
        "My back hurts.",
        "I've got a pain in my back.",
        "My back is killing me.",
        "My back's aching again.",
    ],
)
concern(
    "headache",
    "feelings",
    [
        "My head hurts.",
        "I've got a headache.",
        "My head is pounding.",
        "I've got a terrible headache.",
    ],
)
concern(
    "doctor_when",
    "appointments",
    [
        "When's my doctor's appointment?",
        "Am I seeing the GP today?",
        "What time is the doctor coming?",
        "Have I got to see the doctor this week?",
        "when do i see the doctor",
        "Is the doctor visiting me today?",
    ],
)
concern(
    "dentist_when",
    "appointments",
    [
        "When do I see the dentist?",
        "Is my dentist appointment today?",
        "Have I got the dentist this week?",
        "What time is the dentist?",
    ],
)
concern(
    "hair_when",
    "appointments",
    [
        "When's my hair appointment?",
        "Is the hairdresser coming today?",
        "I need to get my hair done, when is it booked?",
        "Am I at the hairdresser's this week?",
    ],
)
concern(
    "visitor_today",
    "appointments",
    [
        "Is anyone coming to see me today?",
        "Am I having any visitors today?",
        "Who's visiting today?",
        "Will somebody come and see me later?",
        "Is anybody popping in today?",
    ],
)
concern(
    "cancel_appt",
    "appointments",
    [
        "I want to cancel my appointment.",
        "I'm not going to the appointment.",
        "Can you ring them and cancel for me?",
        "I don't want to go to the clinic, cancel it.",
    ],
)
concern(
    "dog_fed",
    "pets",
    [
        "Has the dog been fed?",
        "Did somebody give the dog his dinner?",
        "The dog needs feeding.",
        "Has anyone fed my dog today?",
        "I must feed the dog.",
        "has the dog had his food",
    ],
)
concern(
    "cat_fed",
    "pets",
    [
        "Has the cat been fed?",
        "Did anyone feed the cat?",
        "The cat will be hungry, give her some food.",
        "I need to put the cat's food out.",
        "has puss had her tea",
    ],
)
concern(
    "walk_dog",
    "pets",
    [
        "I need to walk the dog.",
        "Has the dog been out for his walk?",
        "The dog wants walking.",
        "Who's taking the dog out?",
        "Time for the dog's walk.",
    ],
)
concern(
    "where_dog",
    "pets",
    [
        "Where's my dog?",
        "Where has the dog got to?",
        "Have you seen my dog anywhere?",
        "I can't find the dog.",
        "where is my dog gone",
        "The dog's not in his basket, where is he?",
    ],
)
concern(
    "where_cat",
    "pets",
    [
        "Where's my cat?",
        "Has anyone seen the cat?",
        "The cat's gone missing.",
        "Where has the cat got to?",
    ],
)
concern(
    "cat_in",
    "pets",
    [
        "Let the cat in.",
        "The cat wants to come in.",
        "Open the door for the cat, she's scratching to get in.",
        "Bring the cat inside.",
    ],
)
concern(
    "cat_out",
    "pets",
    [
        "Let the cat out.",
        "The cat wants to go out.",
        "Open the door so the cat can get out.",
        "Put the cat outside.",
    ],
)
concern(
    "dog_name",
    "pets",
    [
        "What's my dog called?",
        "What was the dog's name?",
        "I've forgotten my dog's name.",
    ],
)


# More wordings of the concerns above, in the voices the first lists lack: long and wandering,
# indirect (a statement for a question), broken off, American.
MORE: dict[str, list[str]] = {
    "go_home": [
        "I really must be getting back now, they'll wonder where I've got to, I need my own house.",
        "It's getting late and I ought to be home, can you sort out a lift for me?",
        "Everybody's very nice here but it's not my home and I want to go back to it.",
        "My house. I need. To get back.",
        "I'd like to head home now, if it's no trouble.",
        "Call me a cab, I'm going back to my place.",
    ],
    "where_am_i": [
        "I woke up and didn't know this room at all, where is this?",
        "This isn't anywhere I know.",
        "Somebody tell me where I am, please, I'm all confused.",
    ],
    "what_day": [
        "The days all run together here, is it Sunday?",
        "Which day have we got to now?",
        "What's today, is it a weekday?",
    ],
    "what_time": [
        "It feels late, I've no idea of the time.",
        "My clock's stopped, how late is it getting?",
        "Could you tell me what time it's got to?",
    ],
    "when_lunch": [
        "I'm waiting for my midday meal, will it be long?",
        "They haven't brought the lunch yet, have they forgotten us?",
        "Dinner at midday, when is it coming?",
    ],
    "hungry": [
        "My tummy's grumbling, I've had nothing.",
        "I fancy something to eat, there's nothing in me.",
        "Is there a biscuit going? I'm peckish.",
        "Feed me, I'm wasting away here.",
    ],
    "thirsty": [
        "I'm parched.",
        "My throat's so dry, I need something to wet it.",
        "Could you get me some juice? I'm gasping.",
    ],
    "took_tablets": [
        "I'm not sure whether I swallowed my pills earlier or not.",
        "Did the nurse bring my tablets round yet? I don't remember having them.",
        "Were my pills given out this morning?",
    ],
    "time_tablets": [
        "I feel I'm due my tablets, is it that time?",
        "It must be pill time by now.",
    ],
    "no_money": [
        "I opened my purse and there wasn't a penny in it.",
        "I can't pay for anything, I've got nothing.",
        "Who's taken all my money? I had some yesterday.",
        "Not a bean left, where's it gone?",
    ],
    "go_work": [
        "The men will be waiting for me at the yard, I need to get down there.",
        "I can't sit here all day, I've a job to go to.",
        "I've got a meeting at the office at nine, I must leave now.",
        "Work. I'm late. Where's my bus pass?",
        "I need to clock in soon or they'll dock my pay.",
    ],
    "collect_children": [
        "Half past three, the children come out of school, I need to be at the gate.",
        "Who's fetching the kids today? Somebody has to.",
        "I need to pick up my little boy from school.",
    ],
    "where_children": [
        "The children aren't back, where can they be?",
        "I don't know where the kids have got to.",
    ],
    "bed": [
        "I'm that tired, I could just curl up on the bed.",
        "Please can I go and rest, I'm exhausted.",
        "I'd like a kip.",
        "Is it bedtime yet? I'm ready to go up.",
        "Get me to bed, love, I've had enough of today.",
        "I want to put my feet up on the bed and close my eyes.",
    ],
    "outside": [
        "I've been indoors all day, I'd love to go out in the garden.",
        "Open that door, I want to go outdoors for a bit.",
        "Could we go out for a little walk round the block?",
        "I'm going stir crazy in here, I need to get out.",
        "Can you take me out for a bit of air?",
    ],
    "toilet": [
        "I'm bursting, where's the lav?",
        "Take me to the toilet, I can't wait.",
        "I need to pee.",
        "Where's the bathroom in this place?",
    ],
    "cold": [
        "I'm chilled to the bone.",
        "Can I have a blanket? I'm freezing cold.",
        "It's perishing in here.",
    ],
    "scared": [
        "I'm frightened, something bad is going to happen.",
        "I don't feel safe, I'm scared.",
        "Please help me, I'm so afraid.",
    ],
    "lonely": [
        "I sit here on my own all day and nobody talks to me.",
        "I've got nobody any more.",
        "Nobody rings, nobody comes, I'm on my own.",
    ],
    "doctor_when": [
        "Is the GP coming round today? I want to see him.",
        "I'm meant to be going to the surgery, what time?",
        "When am I seeing the doctor about my knee?",
    ],
    "visitor_today": [
        "Will my family be coming in today?",
        "Is somebody visiting this afternoon?",
        "I'm expecting visitors, are they coming?",
    ],
    "dog_fed": [
        "The dog's bowl is empty, has he had his dinner?",
        "Somebody needs to give the dog his tea.",
        "Did you feed the dog this morning?",
    ],
    "where_dog": [
        "I haven't seen the dog all day, where is he?",
        "Has the dog run off? I can't see him.",
    ],
    "tv_on": [
        "I'd like to see what's on the television.",
        "Can you put my programmes on?",
        "Get the telly going, would you?",
    ],
    "pay_bills": [
        "There's a bill on the mat, I must pay it.",
        "I'm behind with the bills, I know I am.",
    ],
    "door_locked": [
        "I'm worried the front door is open, did anyone lock it?",
        "Make sure the door's locked, won't you?",
    ],
}
for name, extra in MORE.items():
    CONCERNS[name][1].extend(w for w in extra if w not in CONCERNS[name][1])

concern(
    "turn_heating_down",
    "daily",
    [
        "Turn the heating down.",
        "It's too warm, can you turn the radiators down?",
        "Switch the heating off, I'm boiling.",
        "Can we have the heating lower?",
    ],
)
concern(
    "wash_hair",
    "daily",
    [
        "I need my hair washing.",
        "Can someone wash my hair?",
        "My hair's dirty, I want it washed.",
    ],
)
concern(
    "glasses_clean",
    "belongings",
    [
        "My glasses are dirty.",
        "Can you clean my specs? I can't see through them.",
        "These glasses are all smeared.",
    ],
)
concern(
    "who_are_you",
    "people",
    [
        "Who are you?",
        "I don't know you, who are you?",
        "Have we met? What's your name?",
        "Who might you be?",
        "Do I know you? I don't think I do.",
    ],
)
concern(
    "who_am_i_with",
    "people",
    [
        "Who else lives here?",
        "Who are all these people?",
        "Who are these other people in the room?",
    ],
)
concern(
    "radio_on",
    "daily",
    [
        "Put the radio on.",
        "Can I have the wireless on?",
        "I'd like some music on the radio.",
    ],
)
concern(
    "post",
    "daily",
    [
        "Has the post come?",
        "Is there any mail for me?",
        "Have I got any letters today?",
        "Did the postman come?",
    ],
)
concern(
    "go_out_shopping",
    "money",
    [
        "I need to buy some bread and milk.",
        "We've run out of milk, I'll have to go to the shop.",
        "I need to get a few bits from the shop.",
    ],
)
concern(
    "birthday",
    "time",
    [
        "When is my birthday?",
        "What date is my birthday?",
        "Is it my birthday soon?",
    ],
)
concern(
    "season",
    "time",
    [
        "Is it summer or winter?",
        "What time of year is it?",
        "Is it spring now?",
    ],
)
LINKS_MORE = [
    # Short questions with no content word, of different kinds: close in MiniLM, not one ask.
    ("where_am_i", "who_are_you", "same_frame"),
    ("where_am_i", "what_time", "same_frame"),
    ("who_are_you", "what_time", "same_frame"),
    ("who_are_you", "what_day", "same_frame"),
    ("where_am_i", "what_day", "same_frame"),
    ("how_got_here", "who_are_you", "same_frame"),
    ("heating", "turn_heating_down", "opposite"),
    ("hot", "turn_heating_down", "same_topic"),
    ("bath", "wash_hair", "same_topic"),
    ("lost_glasses", "glasses_clean", "same_topic"),
    ("who_are_you", "who_am_i_with", "same_frame"),
    ("tv_on", "radio_on", "different_referent"),
    ("post", "visitor_today", "same_topic"),
    ("go_out_shopping", "no_money", "same_topic"),
    ("birthday", "what_day", "same_topic"),
    ("season", "what_year", "same_frame"),
    ("season", "weather", "same_topic"),
]

# --- Round five (issue 17): more voices per concern, new concerns, same-frame negatives --------
# Written from the kinds the tuning half's out-of-fold misses showed weak (long rambling asks
# against short ones, indirect statements, homophone typos, "is this mine?" against "where is
# it?", another person as the subject), never from the held-out half.

MORE_R5: dict[str, list[str]] = {
    "hungry": [
        "I've had nothing since this morning, is there anything going?",
        "My belly thinks my throat's been cut.",
        "Any chance of a sandwich? I'm empty.",
        "I feel faint, I need something in my stomach.",
        "I'd love a bit of toast or a biscuit, anything really.",
    ],
    "outside": [
        "I need a bit of fresh air, it's close in here.",
        "Can we open the back door and sit in the garden?",
        "I'd like to get out into the open air for a while.",
        "Could I have a wander round outside?",
        "I want to feel the sun on my face, can we go out?",
    ],
    "bed": [
        "Can I go and lie down for a bit?",
        "I need a lie down, I'm whacked.",
        "Can I lie on my bed for a while?",
        "I want to go up and have a rest.",
        "I'm dropping off in this chair, can I go to bed?",
        "Take me up to my room, I need a sleep.",
    ],
    "took_tablets": [
        "The lady with the trolley came round, but did she give me mine? I don't think she did.",
        "I've got that little box with the days on, and I can't tell if I've done today's or not.",
        "Did I swallow my medicine at breakfast? I can't for the life of me remember.",
        "Have I had today's medication? My memory's no good.",
        "My pills, the white ones and the little yellow one, have I had them this morning?",
    ],
    "sad": [
        "I'm feeling a bit low.",
        "I'm down in the dumps today.",
        "I've got the blues, love.",
        "Everything feels so grey today, I'm fed up.",
        "I'm not happy at all today.",
    ],
    "lonely": [
        "I'm all on my own here.",
        "I never see a soul from one day to the next.",
        "There's nobody to keep me company.",
    ],
    "go_work": [
        "The patients at the surgery will be waiting for me.",
        "I need to get to the school, my class starts at nine.",
        "They're short-handed at the mill, I have to go in.",
        "My customers will be wondering where I've got to, I must open the shop.",
    ],
    "where_children": [
        "My little ones, where have they got to?",
        "Who's got the kids? I can't find them.",
    ],
    "pay_bills": [
        "Has the electricity been paid?",
        "Did someone pay the gas this quarter?",
        "The phone bill, has it gone out yet?",
        "Are we up to date with the rent and the water?",
    ],
    "no_money": [
        "I've nothing in my purse, how am I going to pay?",
        "I've got to pay for this and I've not a penny on me.",
        "Where's my money gone? I need to settle up.",
    ],
    "doctor_when": [
        "There was a letter from the surgery about seeing the doctor, when is it, I've put it down somewhere?",
        "Is it today I see the GP or is it tomorrow?",
    ],
    "go_home": [
        "I've been sitting here all afternoon and I really should be getting back now, my things are all at home and nobody knows where I am.",
        "Home now. Please.",
        "Which way is out? I'm going back to my house.",
        "Get me my coat, I'm going home.",
        "Can you ring someone to take me home? I want to go back to my own house.",
    ],
    "where_am_i": [
        "What am I doing in this place?",
        "Why have they put me here?",
        "What's the reason I'm in here?",
        "Why am I in this building, what's going on?",
    ],
    "dog_fed": [
        "The dog's been going round in circles by his bowl, I think he's not had anything, has he?",
    ],
    "when_dinner": [
        "I'm ever so hungry, will dinner be long?",
        "How long till we eat tonight?",
        "Is tea nearly ready?",
        "What time do they bring the evening meal?",
    ],
    "cup_of_tea": [
        "I'm parched, could you put the kettle on?",
        "I'd kill for a cuppa.",
        "Is there any tea in the pot?",
    ],
    "what_day": [
        "I've lost track of the days, which one is it today?",
        "Is it Monday or Tuesday? I don't know any more.",
    ],
    "what_time": [
        "I haven't got my watch on, how late is it?",
        "Is it nearly twelve? What time have you got?",
    ],
    "time_tablets": [
        "Should I be having my medicine about now?",
        "Am I due some tablets yet?",
    ],
    "toilet": [
        "I'm desperate, where's the bathroom?",
        "Where's the restroom? I need to go.",
    ],
    "scared": [
        "I'm all of a tremble, something's not right.",
        "I've got a horrible feeling something bad is going to happen.",
    ],
    "cold": [
        "My hands are like ice.",
        "Brr, it's chilly in here, I'm frozen.",
    ],
}
for name, extra in MORE_R5.items():
    CONCERNS[name][1].extend(w for w in extra if w not in CONCERNS[name][1])

concern(
    "optician_when",
    "appointments",
    [
        "When am I seeing the optician?",
        "When's my eye appointment?",
        "I'm due to have my eyes tested, what day is that?",
        "Is my eye check this week?",
        "When do I go to the opticians about my glasses?",
        "The eye man, when am I seeing him?",
    ],
)
concern(
    "missed_appt",
    "appointments",
    [
        "I think I've missed an appointment.",
        "Was I meant to be somewhere today?",
        "Did I forget to go to my appointment?",
        "I was supposed to be at the clinic, have I missed it?",
        "Oh no, wasn't I booked in somewhere this morning?",
    ],
)
concern(
    "children_safe",
    "children",
    [
        "Are my kids alright?",
        "Is someone minding the children?",
        "Who's watching the little ones?",
        "I hope the children are safe, is anybody with them?",
        "Are the kiddies being looked after?",
        "Somebody's got to keep an eye on the children, are they alright?",
    ],
)
concern(
    "dog_ok",
    "pets",
    [
        "Is my dog alright?",
        "How's my doggy getting on?",
        "Is the dog okay without me?",
        "I hope my dog's alright, is he?",
        "How is my little pup doing?",
    ],
)
concern(
    "walk_dog_done",
    "pets",
    [
        "Has the dog been out for his walk?",
        "Did anybody take the dog round the block?",
        "The dog hasn't been walked, has he?",
        "Has someone taken the dog out today?",
    ],
)
concern(
    "why_here",
    "place",
    [
        "Why do I have to stay here?",
        "What have I done to be kept in here?",
        "Why won't they let me leave this place?",
        "How long do I have to be in here for?",
    ],
)
concern(
    "hospital_far",
    "place",
    [
        "How far away is the hospital?",
        "Is the hospital a long way from here?",
        "How long does it take to get to the hospital?",
    ],
)
concern(
    "owe_them",
    "money",
    [
        "How much do I owe you?",
        "Have I got to pay you something?",
        "Is there anything I need to give you for this?",
        "Do I have to settle up with you?",
    ],
)
concern(
    "owed_me",
    "money",
    [
        "Does anybody owe me money?",
        "You still owe me for the paper.",
        "Have you paid me back yet?",
        "Someone borrowed a tenner off me and never gave it back.",
    ],
)
concern(
    "angry",
    "feelings",
    [
        "I'm so cross.",
        "I'm absolutely furious.",
        "I feel really angry right now.",
        "Everything's making me mad today.",
        "I'm fuming, I could scream.",
    ],
)
concern(
    "why_angry",
    "feelings",
    [
        "Why do I get so upset?",
        "What makes me lose my temper like that?",
        "Why am I always so cross these days?",
    ],
)
concern(
    "colleagues",
    "work",
    [
        "Who else is in my office?",
        "Who do I work with?",
        "Are my workmates in today?",
        "Who's on shift with me?",
    ],
)
concern(
    "radio_off",
    "daily",
    [
        "Turn the radio off.",
        "Switch that wireless off, would you?",
        "I don't want the radio on any more.",
    ],
)
concern(
    "what_day_appt",
    "appointments",
    [
        "What day is my appointment?",
        "Which day am I at the hospital?",
        "What date have they given me for the clinic?",
    ],
)
LINKS_R5 = [
    ("optician_when", "doctor_when", "different_referent"),
    ("optician_when", "dentist_when", "different_referent"),
    ("optician_when", "lost_glasses", "same_topic"),
    ("missed_appt", "doctor_when", "same_topic"),
    ("missed_appt", "cancel_appt", "same_topic"),
    ("children_safe", "children_fed", "same_topic"),
    ("children_safe", "collect_children", "same_topic"),
    ("dog_ok", "where_dog", "same_topic"),
    ("dog_ok", "dog_fed", "same_topic"),
    ("dog_ok", "dog_name", "same_topic"),
    ("walk_dog_done", "dog_fed", "same_frame"),
    ("walk_dog_done", "cat_fed", "different_referent"),
    ("why_here", "where_am_i", "same_topic"),
    ("why_here", "stay_here", "same_topic"),
    ("hospital_far", "is_hospital", "same_topic"),
    ("owe_them", "owed_me", "opposite"),
    ("owe_them", "no_money", "same_topic"),
    ("angry", "why_angry", "same_topic"),
    ("angry", "sad", "same_frame"),
    ("angry", "scared", "same_frame"),
    ("colleagues", "go_work", "same_topic"),
    ("colleagues", "old_job", "same_topic"),
    ("radio_off", "radio_on", "opposite"),
    ("radio_off", "light_off", "different_referent"),
    ("radio_off", "tv_off", "different_referent"),
    ("what_day_appt", "what_day", "same_frame"),
    ("what_day_appt", "birthday", "same_frame"),
    ("where_am_i", "lost_keys", "same_frame"),
    ("where_am_i", "lost_glasses", "same_frame"),
    ("when_dinner", "hungry", "same_topic"),
    ("outside", "door_locked", "same_topic"),
    ("sad", "lonely", "same_frame"),
    ("work_husband", "go_work", "different_referent"),
    ("sad_husband", "sad", "different_referent"),
    ("sad_mother", "sad", "different_referent"),
]
LINKS_MORE += LINKS_R5


# --- Templates over a referent ---------------------------------------------------------------

PEOPLE = {
    "husband": ["my husband", "my hubby", "my husband"],
    "wife": ["my wife", "the wife", "my missus"],
    "mother": ["my mother", "my mum", "my mom", "my mam"],
    "father": ["my father", "my dad", "my daddy"],
    "son": ["my son", "my boy", "our son"],
    "daughter": ["my daughter", "my girl", "our daughter"],
    "sister": ["my sister", "our sister"],
    "brother": ["my brother", "our brother"],
}
PERSON_WANTS = [
    "Where's {p}?",
    "Have you seen {p}?",
    "Is {p} coming to get me?",
    "When is {p} coming back?",
    "{P} should have been here by now.",
    "I'm waiting for {p}, is {p} on the way?",
    "Can you find {p} for me?",
    "I need {p}, where have they gone?",
    "wheres {p}",
    "Has {p} gone out? When will they be back?",
    "I want {p}.",
    "Is {p} here yet?",
    "I keep thinking {p} will walk through that door any minute, they said they'd come, have they rung, do you know where they are?",
    "It's getting late and there's still no sign of {p}, I don't understand it, they're never usually this late.",
]
PERSON_PHONE = [
    "Can I ring {p}?",
    "I need to phone {p}.",
    "Will you call {p} for me?",
    "Can you get {p} on the phone?",
    "I want to speak to {p} on the telephone.",
]
PERSON_OTHER = [  # same person, another question: negatives against wanting them
    ("dead", ["Is {p} dead?", "Did {p} die?", "Has {p} passed away?"]),
    ("age", ["How old is {p} now?", "What age is {p}?"]),
    ("well", ["Is {p} ill?", "Is {p} poorly?", "Is {p} in hospital?"]),
    ("work", ["{P} has to go to work.", "Has {p} gone to work?", "Is {p} at work today?"]),
    ("sad", ["Why is {p} upset?", "Is {p} unhappy?", "{P} seems sad today."]),
    (
        "memory",
        ["{P} was a lovely dancer.", "{P} used to sing to me.", "I remember {p} at the seaside."],
    ),
]

THINGS = {
    "coat": ["my coat", "my jacket", "my anorak"],
    "glasses": ["my glasses", "my specs", "my spectacles", "my reading glasses"],
    "handbag": ["my handbag", "my bag"],
    "purse": ["my purse"],
    "keys": ["my keys", "my house keys", "the keys"],
    "ring": ["my ring", "my wedding ring"],
    "watch": ["my watch", "my wristwatch"],
    "teeth": ["my teeth", "my dentures", "my false teeth"],
    "hearing": ["my hearing aid", "my hearing aids"],
    "shoes": ["my shoes", "my slippers"],
    "phone": ["my phone", "my mobile", "my cellphone"],
    "hat": ["my hat", "my woolly hat"],
}
THING_LOST = [
    "Where's {t}?",
    "I can't find {t} anywhere.",
    "Has somebody taken {t}?",
    "I've lost {t}.",
    "Have you seen {t}?",
    "{T} has gone, someone's pinched it.",
    "where did i put {t}",
    "I had {t} a minute ago and now it's gone.",
    "Help me look for {t}, would you?",
    "I've looked everywhere for {t}.",
    "I put {t} down somewhere, by the kettle or in the bedroom, I can't think where, and now it isn't anywhere at all.",
    "Oh, I've been up and down all morning hunting, the drawers, the cupboard, under the cushions, and {t} just isn't there.",
]
THING_OTHER = [
    ("broken", ["{T} is broken.", "Can you mend {t}? It's broken.", "{T} has stopped working."]),
    ("mine", ["Is this {t}?", "Whose is this? Is it {t}?", "Are you sure this is {t}?"]),
    ("bought", ["Where did I buy {t}?", "When did I get {t}?", "Who gave me {t}?"]),
    ("new", ["{T} is worn out, I need a new one.", "I want to replace {t}, it's no good now."]),
]

PLACES = {
    "church": ["church", "the chapel"],
    "shops": ["the shops", "the supermarket", "the market"],
    "bank": ["the bank"],
    "station": ["the station", "the railway station"],
    "post_office": ["the post office"],
    "seaside": ["the seaside", "the beach"],
    "pub": ["the pub", "the local"],
    "school": ["school", "the school"],
}
PLACE_GO = [
    "I need to get to {l}.",
    "Take me to {l}, please.",
    "Can we go to {l}?",
    "I have to go down to {l}.",
    "I want to go to {l} today.",
    "Is anybody going to {l}? I need to go.",
    "i need to go to {l} now",
]
PLACE_OPEN = ["Is {l} open?", "What time does {l} open?", "Will {l} be open today?"]


def _fill(template: str, value: str, key: str) -> str:
    text = template.replace("{" + key + "}", value)
    upper = value[0].upper() + value[1:]
    return text.replace("{" + key.upper() + "}", upper)


for person, forms in PEOPLE.items():
    concern(
        f"want_{person}",
        "people",
        [_fill(t, forms[i % len(forms)], "p") for i, t in enumerate(PERSON_WANTS)],
    )
    concern(
        f"phone_{person}",
        "people",
        [_fill(t, forms[(i + 1) % len(forms)], "p") for i, t in enumerate(PERSON_PHONE)],
    )
    for what, templates in PERSON_OTHER:
        concern(
            f"{what}_{person}",
            "people",
            [_fill(t, forms[i % len(forms)], "p") for i, t in enumerate(templates)],
        )
for thing, forms in THINGS.items():
    concern(
        f"lost_{thing}",
        "belongings",
        [_fill(t, forms[i % len(forms)], "t") for i, t in enumerate(THING_LOST)],
    )
    for what, templates in THING_OTHER:
        concern(
            f"{what}_{thing}",
            "belongings",
            [_fill(t, forms[i % len(forms)], "t") for i, t in enumerate(templates)],
        )
for place, forms in PLACES.items():
    concern(
        f"go_{place}",
        "place",
        [_fill(t, forms[i % len(forms)], "l") for i, t in enumerate(PLACE_GO)],
    )
    concern(
        f"open_{place}",
        "place",
        [_fill(t, forms[i % len(forms)], "l") for i, t in enumerate(PLACE_OPEN)],
    )

# A reason or a second thought said with the ask ("added context"): the ask stays the concern.
# By concern name, or by the prefix of a templated concern.
REASONS: dict[str, list[str]] = {
    "go_home": [
        "The cat will want feeding.",
        "I've left the oven on.",
        "My husband will be waiting.",
    ],
    "where_am_i": ["I was at home a minute ago.", "I don't like it."],
    "what_day": ["I've got things to do.", "Is the paper here?"],
    "what_time": ["I mustn't miss my bus.", "Is it nearly bedtime?"],
    "hungry": ["I missed my breakfast.", "I've been waiting ages."],
    "took_tablets": ["The doctor said I mustn't miss them.", "I don't want to take them twice."],
    "time_tablets": ["My knee is hurting.", "The nurse hasn't been."],
    "no_money": ["I need to pay the paper boy.", "I was going to buy some stamps."],
    "go_work": ["The boss is a stickler.", "It's payday on Friday."],
    "collect_children": ["They'll be frightened if nobody comes.", "It's raining."],
    "bed": ["It's been a long day.", "My legs are aching."],
    "outside": ["It's a lovely day.", "I feel shut in."],
    "toilet": ["I can't hold on.", "Quickly."],
    "scared": ["There's a man at the window.", "I heard a noise."],
    "lonely": ["My husband died, you know.", "The days are so long."],
    "dog_fed": ["He's whining.", "I don't want him to go hungry."],
    "lost_": [
        "I need to go out.",
        "I'm going to the shops.",
        "It was here a minute ago.",
        "I always keep it by the bed.",
    ],
    "want_": ["I'm worried.", "It's getting dark.", "They said they wouldn't be long."],
    "go_": ["It's important.", "I promised I would.", "I'll be late."],
}
reason_rng = random.Random(SEED + 1)
for name, (_, wordings) in list(CONCERNS.items()):
    reasons = REASONS.get(name) or next(
        (r for prefix, r in REASONS.items() if prefix.endswith("_") and name.startswith(prefix)),
        None,
    )
    if not reasons:
        continue
    asks = [w for w in wordings[:8] if len(w.split()) <= 8]
    for ask in reason_rng.sample(asks, min(3, len(asks))):
        reason = reason_rng.choice(reasons)
        wordings.append(f"{ask} {reason}" if reason_rng.random() < 0.7 else f"{reason} {ask}")


# Styles laid over a wording: filler before, a rambling reason after, the words said twice.
FILLERS = ["Oh dear, I don't know, ", "Um, sorry love, ", "Listen, ", "Excuse me, ", "Well, "]
RAMBLES = [
    " I keep asking, don't I, but nobody tells me.",
    " I'm all muddled today.",
    " Sorry to be a nuisance.",
    " It's been on my mind all morning.",
]


HOMOPHONES = {
    "son": "sun",
    "where's": "wheres",
    "your": "you're",
    "there": "their",
    "to": "too",
    "know": "no",
    "been": "bin",
    "right": "rite",
    "week": "weak",
}


def typo(text: str, rng: random.Random) -> str:
    """A slip of the fingers: a homophone, or two letters of one longer word swapped."""
    words = text.split()
    sounds = [i for i, w in enumerate(words) if w.lower() in HOMOPHONES]
    if sounds and rng.random() < 0.5:
        i = rng.choice(sounds)
        words[i] = HOMOPHONES[words[i].lower()]
    else:
        long = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
        if not long:
            return text
        i = rng.choice(long)
        w = words[i]
        j = rng.randrange(1, len(w) - 2)
        words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def styled(text: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll > 0.92:
        return typo(text, rng)
    if roll < 0.15:
        head = rng.choice(FILLERS)
        return head + text[0].lower() + text[1:]
    if roll < 0.28:
        return text + rng.choice(RAMBLES)
    if roll < 0.36:
        return re.sub(r"[^\w\s']", "", text).lower()
    return text


# --- Hard negatives: concern pairs that share a frame, a topic or a word ----------------------

LINKS: list[tuple[str, str, str]] = [
    ("go_home", "stay_here", "opposite"),
    ("go_home", "where_live", "same_topic"),
    ("go_home", "house_safe", "same_topic"),
    ("where_live", "house_safe", "same_topic"),
    ("where_am_i", "how_got_here", "same_topic"),
    ("where_am_i", "is_hospital", "same_topic"),
    ("how_got_here", "is_hospital", "same_topic"),
    ("what_day", "what_time", "same_frame"),
    ("what_day", "what_year", "same_frame"),
    ("what_time", "what_year", "same_frame"),
    ("what_time", "morning_or_night", "same_topic"),
    ("when_lunch", "when_dinner", "different_referent"),
    ("hungry", "thirsty", "same_frame"),
    ("thirsty", "cup_of_tea", "same_topic"),
    ("had_breakfast", "what_breakfast", "same_topic"),
    ("had_breakfast", "took_tablets", "same_frame"),
    ("took_tablets", "tablets_for", "same_topic"),
    ("took_tablets", "refuse_tablets", "same_topic"),
    ("time_tablets", "tablets_for", "same_topic"),
    ("time_tablets", "refuse_tablets", "same_topic"),
    ("tablets_sick", "tablets_for", "same_topic"),
    ("no_money", "pay_bills", "same_topic"),
    ("no_money", "pension", "same_topic"),
    ("pay_bills", "pension", "same_topic"),
    ("pay_for_here", "no_money", "same_topic"),
    ("go_work", "retired", "opposite"),
    ("go_work", "old_job", "same_topic"),
    ("retired", "old_job", "same_topic"),
    ("collect_children", "where_children", "same_topic"),
    ("where_children", "children_fed", "same_topic"),
    ("collect_children", "children_fed", "same_topic"),
    ("bed", "cant_sleep", "same_topic"),
    ("bed", "get_up", "opposite"),
    ("outside", "weather", "same_topic"),
    ("outside", "who_outside", "shared_words"),
    ("toilet", "bath", "same_frame"),
    ("tv_on", "tv_off", "opposite"),
    ("light_on", "light_off", "opposite"),
    ("tv_on", "light_on", "same_frame"),
    ("tv_off", "light_off", "same_frame"),
    ("door_locked", "window_shut", "same_frame"),
    ("heating", "cold", "same_topic"),
    ("cold", "hot", "opposite"),
    ("scared", "lonely", "same_frame"),
    ("lonely", "sad", "same_frame"),
    ("scared", "sad", "same_frame"),
    ("unwell", "pain", "same_topic"),
    ("pain", "headache", "different_referent"),
    ("cold", "lonely", "same_frame"),
    ("doctor_when", "dentist_when", "different_referent"),
    ("doctor_when", "hair_when", "different_referent"),
    ("dentist_when", "hair_when", "different_referent"),
    ("doctor_when", "cancel_appt", "same_topic"),
    ("visitor_today", "doctor_when", "same_topic"),
    ("dog_fed", "cat_fed", "different_referent"),
    ("dog_fed", "walk_dog", "same_topic"),
    ("dog_fed", "where_dog", "same_topic"),
    ("where_dog", "where_cat", "different_referent"),
    ("where_dog", "dog_name", "same_topic"),
    ("walk_dog", "where_dog", "same_topic"),
    ("cat_in", "cat_out", "opposite"),
    ("cat_fed", "where_cat", "same_topic"),
    ("go_home", "go_work", "same_frame"),
    ("bed", "outside", "same_frame"),
    ("hungry", "bed", "same_frame"),
    ("toilet", "bed", "same_frame"),
]
LINKS += LINKS_MORE
people = list(PEOPLE)
for a, b in itertools.combinations(people, 2):
    LINKS.append((f"want_{a}", f"want_{b}", "different_referent"))
for person in people:
    LINKS.append((f"want_{person}", f"phone_{person}", "same_topic"))
    for what, _ in PERSON_OTHER:
        LINKS.append((f"want_{person}", f"{what}_{person}", "same_topic"))
things = list(THINGS)
for a, b in itertools.combinations(things, 2):
    LINKS.append((f"lost_{a}", f"lost_{b}", "different_referent"))
for thing in things:
    for what, _ in THING_OTHER:
        LINKS.append((f"lost_{thing}", f"{what}_{thing}", "same_topic"))
places = list(PLACES)
for a, b in itertools.combinations(places, 2):
    LINKS.append((f"go_{a}", f"go_{b}", "different_referent"))
for place in places:
    LINKS.append((f"go_{place}", f"open_{place}", "same_frame"))
    LINKS.append((f"go_{place}", "go_home", "different_referent"))


def build() -> list[dict]:
    rng = random.Random(SEED)
    banned = set()
    if EVAL.exists():
        for line in EVAL.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                banned.update({normalise(row["earlier"]), normalise(row["current"])})
    dropped = set()

    def keep(text: str) -> bool:
        if normalise(text) in banned:
            dropped.add(text)
            return False
        return True

    rows: list[dict] = []
    seen: set[tuple[str, str]] = set()

    def add(category, label, kind, earlier, current, concerns):
        earlier, current = styled(earlier, rng), styled(current, rng)
        key = (normalise(earlier), normalise(current))
        if key[0] == key[1] or key in seen or not keep(earlier) or not keep(current):
            return
        seen.add(key)
        rows.append(
            {
                "id": "",
                "category": category,
                "label": label,
                "kind": kind,
                "concerns": concerns,
                "earlier": earlier,
                "current": current,
            }
        )

    for name, (category, wordings) in CONCERNS.items():
        pairs = list(itertools.combinations(wordings, 2))
        rng.shuffle(pairs)
        for a, b in pairs[:POSITIVES_PER_CONCERN]:
            if rng.random() < 0.5:
                a, b = b, a
            add(category, 1, "paraphrase", a, b, [name, name])
    for a, b, kind in LINKS:
        category = CONCERNS[a][0]
        for _ in range(NEGATIVES_PER_LINK):
            x, y, names = rng.choice(CONCERNS[a][1]), rng.choice(CONCERNS[b][1]), [a, b]
            if rng.random() < 0.5:
                x, y, names = y, x, [b, a]
            add(category, 0, kind, x, y, names)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["category"]] = counts.get(row["category"], 0) + 1
        row["id"] = f"train-{row['category']}-{counts[row['category']]:03d}"
    build.dropped = sorted(dropped)  # type: ignore[attr-defined]
    return rows


def main() -> None:
    rows = build()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    positives = sum(r["label"] for r in rows)
    digest = hashlib.sha256(OUT.read_bytes()).hexdigest()[:12]
    print(
        f"{OUT.relative_to(ROOT)}: {len(rows)} pairs ({positives} repeats, "
        f"{len(rows) - positives} not), {len(CONCERNS)} concerns; "
        f"{len(build.dropped)} messages dropped as also in pairs.jsonl; sha256 {digest}"  # type: ignore[attr-defined]
    )


if __name__ == "__main__":
    main()
