package course

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
)

// ChoiceOrder is the order one learner sees a question's n choices in: a
// permutation of 0…n−1 (element i is the index in the file of the choice
// shown i-th), drawn from seed and the question's key (ChoiceKey). The
// seed is what the learners who should see one order share: a room's
// code, so a room discusses "answer B" and means one thing, or a
// browser's identity, so a self-study learner sees the same order on
// every visit. Shuffling means the place of the right answer in the file
// tells nothing (issue 38: 24 of 39 right answers were B, none D).
func ChoiceOrder(seed, key string, n int) []int {
	if n <= 0 {
		return nil
	}
	h := sha256.Sum256([]byte("outlierlab choices v1\x00" + seed + "\x00" + key))
	r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])))
	return r.Perm(n)
}

// ChoiceKey names a question of a lesson for ChoiceOrder: "predict", or
// "quiz/0", "quiz/1", … by its index.
func ChoiceKey(lesson string, quiz int) string {
	if quiz < 0 {
		return lesson + "/predict"
	}
	return lesson + "/quiz/" + strconv.Itoa(quiz)
}

// Question is one multiple-choice question of a lesson, prediction or
// quiz, as the guessability test reads them.
type Question struct {
	Lesson string
	// Key is its ChoiceKey.
	Key     string
	Choices []string
	Answer  int
}

// Questions are every lesson's prediction and quiz questions, in course
// order.
func Questions(ls []Lesson) []Question {
	var out []Question
	for _, l := range ls {
		if l.Predict.Question != "" {
			out = append(out, Question{Lesson: l.ID, Key: ChoiceKey(l.ID, -1), Choices: l.Predict.Choices, Answer: l.Predict.Answer})
		}
		for i, q := range l.Quiz {
			out = append(out, Question{Lesson: l.ID, Key: ChoiceKey(l.ID, i), Choices: q.Choices, Answer: q.Answer})
		}
	}
	return out
}
