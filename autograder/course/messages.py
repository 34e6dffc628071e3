"""Messages shared by every exercise: statuses, exception diagnoses, table headings."""

__all__ = ["MESSAGES"]

MESSAGES = {
    "status.passed": {"en": "passed", "zh": "通过"},
    "status.failed": {"en": "failed", "zh": "未通过"},
    "status.error": {"en": "error", "zh": "出错"},
    "heading.public": {"en": "Checks for {title} — {progress}", "zh": "检查：{title}——{progress}"},
    "heading.hidden": {"en": "Graded checks for {title} — {progress}", "zh": "评分检查：{title}——{progress}"},
    "heading.score": {"en": "score {score:g}/{max_score:g}", "zh": "得分 {score:g}/{max_score:g}"},
    # The progress line of check(...) and check_all(...): "done" only when every public check passes, previews too.
    # Of the points, what is secured (passing public checks), what is graded later on new values (hidden checks whose
    # previews pass: not secured) and what is on failing checks (a failing public check, or the hidden twin of a
    # failing preview); a part worth 0 is left out (autograder.checking.feedback.Progress).
    "heading.progress": {
        "en": "✘ public checks: {passed} passing, {failed} failing (previews included) · of {points:g} points: "
              "{parts}",
        "zh": "✘ 公开检查：{passed} 项通过，{failed} 项未通过（含预览）· 共 {points:g} 分：{parts}"},
    "progress.secured": {"en": "{points:g} secured", "zh": "{points:g} 分已拿到"},
    "progress.later": {"en": "{points:g} graded later on new values (their previews pass)",
                       "zh": "{points:g} 分评分时换用新的数值（其预览已通过）"},
    "progress.failing": {"en": "{points:g} on checks that still fail", "zh": "{points:g} 分在仍未通过的检查上"},
    "progress.separator": {"en": ", ", "zh": "，"},
    "heading.progress_done": {
        "en": "✔ all {total} public checks pass (previews included) · {points:g} points in all, {later:g} of them "
              "graded later on new values",
        "zh": "✔ 全部 {total} 项公开检查都通过（含预览）· 共 {points:g} 分，其中 {later:g} 分评分时换用新的数值"},
    "summary.heading": {
        "en": "{notebook}: {done} of {total} exercises done",
        "zh": "{notebook}：{total} 个练习中已完成 {done} 个"},
    "summary.done": {"en": "done", "zh": "已完成"},
    "summary.total": {"en": "notebook: {progress}", "zh": "本 notebook：{progress}"},
    "summary.exercise": {"en": "{title} — {state}", "zh": "{title}（{state}）"},
    "summary.failing": {"en": "failing", "zh": "未通过"},
    "summary.not_started": {"en": "not started", "zh": "未开始"},
    # The hint ladder (autograder.checking.feedback.HintLadder), one per cause of failure: each rung's line, and the
    # footer naming the next.
    "ladder.question": {"en": "ask yourself — {text}", "zh": "想一想：{text}"},
    "label.misconception": {"en": "reproduced mistake — {text}", "zh": "重现出的错误：{text}"},
    "label.hint": {"en": "hint — {text}", "zh": "提示：{text}"},
    "ladder.change": {"en": "what to change — {text}", "zh": "怎么改：{text}"},
    "ladder.next_mistake": {
        "en": "» the reproduced mistake and a hint: check(..., hint=True) shows them, and so does the next run that "
              "still fails for the same reason",
        "zh": "» 重现出的错误和提示：check(..., hint=True) 会显示，下一次因同样的原因仍未通过的运行也会显示"},
    "ladder.next_change": {
        "en": "» what to change, in words: check(..., hint=True) once more, or check(..., hint=3)",
        "zh": "» 想看用文字说明的改法：再运行一次 check(..., hint=True)，或者 check(..., hint=3)"},
    # A rung with nothing new (autograder.checking.feedback): said plainly, with where to look instead.
    "ladder.nothing_known": {
        "en": "no further hint: no known mistake reproduces this failure. Look at where your result first differs "
              "from the expected one (the values above) and work back from that step",
        "zh": "没有更多提示：没有哪个已知的错误能重现这次失败。请看你的结果从哪里开始与期望的不同（上面的数值），"
              "再从那一步往回查"},
    # Under a rung 2 that says where the computation first departs from the notes' steps (issue 58).
    "ladder.departure_stated": {
        "en": "no further hint: the line above says at which step of the notes your computation first departs, and "
              "what it holds there; change that step so that it computes what the notes' step computes, and run "
              "again",
        "zh": "没有更多提示：上面一行已经说明你的计算从笔记的哪一步开始不同，以及那里得到的是什么；"
              "把那一步改成计算笔记中那一步所计算的内容，再运行一次"},
    # Under a rung 2 that says only where the code raised, no step of the notes compared (issue 58).
    "ladder.raised_stated": {
        "en": "no further hint: the line above says where your code raised and where to start looking; start there, "
              "and run again once that line no longer raises",
        "zh": "没有更多提示：上面一行已经说明你的代码在哪里抛出了异常，以及从哪里开始查；请从那里开始，"
              "等那一行不再抛出异常后再运行一次"},
    # Under a rung 2 that says every step matches and what the function returns instead (issue 58).
    "ladder.result_stated": {
        "en": "no further hint: the line above says which of the notes' steps your function returns and in what "
              "form; change what it returns, and run again",
        "zh": "没有更多提示：上面一行已经说明你的函数返回的是笔记中的哪一步、是什么形式；改正它返回的东西，再运行一次"},
    # Under a rung 2 that names a step alone (no fact of what the code holds there) or how a count differs
    # (count_difference) (running/diagnosing.py: CheckResult.departure_kind).
    "ladder.count_stated": {
        "en": "no further hint: the line above says how your count differs from the module's trainable parameters; "
              "change what your count adds up so that it counts exactly those, and run again",
        "zh": "没有更多提示：上面一行已经说明你的计数与这个模块的可训练参数差在哪里；"
              "改一改你的计数累加的内容，让它恰好数这些参数，再运行一次"},
    "ladder.unproven_stated": {
        "en": "no further hint: the line above says what this case shows of your computation; run your function by "
              "hand on this input and on one whose entries all differ, print each step, and compare them with the "
              "notes' steps",
        "zh": "没有更多提示：上面一行已经说明这个例子能看出你的计算的哪些情况；"
              "请在这个输入上、以及在一个各元素都不相同的输入上手动运行你的函数，打印每一步，并与笔记中的各步对照"},
    "ladder.reads_stated": {
        "en": "no further hint: the line above says which of the notebook's variables your code reads; take every "
              "size from the tensors and arguments your code is given instead, and run again",
        "zh": "没有更多提示：上面一行已经说明你的代码读取了 notebook 中的哪些变量；请改为从传给你的代码的张量和参数中"
              "取得每一个尺寸，再运行一次"},
    "ladder.step_stated": {
        "en": "no further hint: the line above says at which step of the notes your computation first departs; "
              "change that step so that it computes what the notes' step computes, and run again",
        "zh": "没有更多提示：上面一行已经说明你的计算从笔记的哪一步开始不同；把那一步改成计算笔记中那一步所计算的内容，"
              "再运行一次"},
    "ladder.nothing_known_at_line": {
        "en": "no further hint: no known mistake reproduces this failure. Start from the line the message above names "
              "and work back from that step",
        "zh": "没有更多提示：没有哪个已知的错误能重现这次失败。请从上面的信息指出的那一行开始，再从那一步往回查"},
    "ladder.nothing_known_in_message": {
        "en": "no further hint: no known mistake reproduces this failure. Start from what the message above says of "
              "your result and work back to the step that makes it so",
        "zh": "没有更多提示：没有哪个已知的错误能重现这次失败。请从上面的信息对你的结果的描述出发，往回找到造成它的"
              "那一步"},
    "ladder.cause_stated": {
        "en": "no further hint: the message above already says what your line does wrong; change that line and run "
              "again",
        "zh": "没有更多提示：上面的信息已经说明了你那一行错在哪里；改正那一行，再运行一次"},
    # The same where the message names no line of the learner's (a size, a dtype, a missing keyword): no line
    # is presumed (issue 58).
    "ladder.cause_stated_in_message": {
        "en": "no further hint: the message above already says what is wrong; change that in your code and run "
              "again",
        "zh": "没有更多提示：上面的信息已经说明了哪里不对；在你的代码中改正它，再运行一次"},
    # Under a table that names a mistake, for a row it is not proven on: never "no known mistake" (issue 58).
    "ladder.nothing_known_besides": {
        "en": "no further hint: nothing proves that the mistake named in this table causes this failure, and no "
              "other known mistake reproduces it. Fix that mistake first; if this still fails, look at where your "
              "result first differs from the expected one (the values above)",
        "zh": "没有更多提示：没有证据表明本表中指出的错误导致了这次失败，也没有别的已知错误能重现它。请先改正那个错误；"
              "如果这里仍未通过，请看你的结果从哪里开始与期望的不同（上面的数值）"},
    "ladder.nothing_known_besides_at_line": {
        "en": "no further hint: nothing proves that the mistake named in this table causes this failure, and no "
              "other known mistake reproduces it. Fix that mistake first; if this still fails, start from the line "
              "the message above names",
        "zh": "没有更多提示：没有证据表明本表中指出的错误导致了这次失败，也没有别的已知错误能重现它。请先改正那个错误；"
              "如果这里仍未通过，请从上面的信息指出的那一行开始查"},
    "ladder.nothing_known_besides_in_message": {
        "en": "no further hint: nothing proves that the mistake named in this table causes this failure, and no "
              "other known mistake reproduces it. Fix that mistake first; if this still fails, start from what the "
              "message above says of your result",
        "zh": "没有更多提示：没有证据表明本表中指出的错误导致了这次失败，也没有别的已知错误能重现它。请先改正那个错误；"
              "如果这里仍未通过，请从上面的信息对你的结果的描述出发往回查"},
    # Under a table that locates the step where the computation departs from the notes, for a row that step is not
    # proven on: never "no known mistake" beside it (issue 58).
    "ladder.nothing_known_beside_departure": {
        "en": "no further hint: nothing proves that the step where this table says your computation departs from "
              "the notes causes this failure, and none of the known mistakes reproduces it. Change that step "
              "first; if this still fails, look at where your result first differs from the expected one (the "
              "values above)",
        "zh": "没有更多提示：没有证据表明本表指出的你的计算与笔记开始不同的那一步导致了这次失败，"
              "已知的错误也都不能重现它。请先改正那一步；如果这里仍未通过，请看你的结果从哪里开始与期望的不同（上面的数值）"},
    "ladder.nothing_known_beside_departure_at_line": {
        "en": "no further hint: nothing proves that the step where this table says your computation departs from "
              "the notes causes this failure, and none of the known mistakes reproduces it. Change that step "
              "first; if this still fails, start from the line the message above names",
        "zh": "没有更多提示：没有证据表明本表指出的你的计算与笔记开始不同的那一步导致了这次失败，"
              "已知的错误也都不能重现它。请先改正那一步；如果这里仍未通过，请从上面的信息指出的那一行开始查"},
    "ladder.nothing_known_beside_departure_in_message": {
        "en": "no further hint: nothing proves that the step where this table says your computation departs from "
              "the notes causes this failure, and none of the known mistakes reproduces it. Change that step "
              "first; if this still fails, start from what the message above says of your result",
        "zh": "没有更多提示：没有证据表明本表指出的你的计算与笔记开始不同的那一步导致了这次失败，"
              "已知的错误也都不能重现它。请先改正那一步；如果这里仍未通过，请从上面的信息对你的结果的描述出发往回查"},
    "ladder.no_more": {
        "en": "no further hint: the lines above are all there is for this mistake. Look at where your result first "
              "differs from the expected one (the values above)",
        "zh": "没有更多提示：关于这个错误，上面几行就是全部内容。请看你的结果从哪里开始与期望的不同（上面的数值）"},
    "ladder.no_more_at_line": {
        "en": "no further hint: the lines above are all there is for this mistake. Start from the line the message "
              "above names",
        "zh": "没有更多提示：关于这个错误，上面几行就是全部内容。请从上面的信息指出的那一行开始查"},
    "ladder.no_more_in_message": {
        "en": "no further hint: the lines above are all there is for this mistake. Start from what the message above "
              "says of your result",
        "zh": "没有更多提示：关于这个错误，上面几行就是全部内容。请从上面的信息对你的结果的描述开始查"},
    # Where a learner's computation first departs from the notes' steps (autograder.checking.departure): rung 2 when
    # no known mistake is named. The steps by their names in the notes (`step.<id>`, declared by the references).
    "label.departure": {"en": "where it departs — {text}", "zh": "从哪里开始不同：{text}"},
    # Rung 2 where nothing departs: every step computed and another returned, or the code raised at its own line.
    "label.returned": {"en": "what your function returns — {text}", "zh": "你的函数返回了什么：{text}"},
    "label.raised": {"en": "where it raised — {text}", "zh": "在哪里抛出了异常：{text}"},
    "departure.join": {"en": "; ", "zh": "；"},
    # A wrong parameter count (autograder.checking.count_difference): the learner's number against the module's parts.
    # The notebook's integers the learner's code reads (autograder.checking.notebook_reads), proven on the case.
    "label.notebook_reads": {"en": "what your code reads — {text}", "zh": "你的代码读取了什么：{text}"},
    "notebook_reads.one": {
        "en": "your code reads the notebook's own variable {reads}, which no check passes to it: on this check's "
              "input, changing it changes what your code does, so its result depends on the notebook and not only on "
              "what your code is given",
        "zh": "你的代码读取了 notebook 自己的变量 {reads}，而检查不会把它传给你的代码：在这项检查的输入上，改变它就会"
              "改变你的代码的行为，所以结果取决于 notebook，而不只取决于传给你的代码的东西"},
    "notebook_reads.many": {
        "en": "your code reads the notebook's own variables {reads}, which no check passes to it: on this check's "
              "input, changing them changes what your code does, so its result depends on the notebook and not only "
              "on what your code is given",
        "zh": "你的代码读取了 notebook 自己的变量 {reads}，而检查不会把它们传给你的代码：在这项检查的输入上，"
              "改变它们就会改变你的代码的行为，所以结果取决于 notebook，而不只取决于传给你的代码的东西"},
    "notebook_reads.read": {"en": "{name} ({value})", "zh": "{name}（{value}）"},
    "label.count": {"en": "how your count differs — {text}", "zh": "你的计数差在哪里：{text}"},
    "count.fewer": {
        "en": "your count is {got:,}, {difference:,} fewer than the {right:,} trainable parameters of this module",
        "zh": "你的计数是 {got:,}，比这个模块的 {right:,} 个可训练参数少 {difference:,} 个"},
    "count.more": {
        "en": "your count is {got:,}, {difference:,} more than the {right:,} trainable parameters of this module",
        "zh": "你的计数是 {got:,}，比这个模块的 {right:,} 个可训练参数多 {difference:,} 个"},
    "count.parts_fewer": {
        "en": "the {difference:,} missing are exactly the entries of {parts}, and no other set of its parameters adds "
              "up to that number",
        "zh": "少掉的 {difference:,} 个恰好是{parts}的元素个数，它的参数中没有别的组合加起来等于这个数"},
    "count.parts_taken": {
        "en": "the {difference:,} missing are exactly the entries of {parts}, which are not trainable parameters and "
              "so were never in the total: your count takes them away from it, and no other set of the module's "
              "parts adds up to that number",
        "zh": "少掉的 {difference:,} 个恰好是{parts}的元素个数；它们不是可训练参数，本来就不在总数里，"
              "你的计数却从总数中减去了它们，模块中也没有别的组合加起来等于这个数"},
    "count.buffers_taken": {
        "en": "the {difference:,} missing are exactly the entries of all this module's buffers ({parts}), which are "
              "not trainable parameters and so were never in the total: your count takes them away from it",
        "zh": "少掉的 {difference:,} 个恰好是这个模块所有 buffer 的元素个数（{parts}），它们不是可训练参数，"
              "本来就不在总数里：你的计数把它们从总数中减掉了"},
    "count.parts_more": {
        "en": "the {difference:,} extra are exactly the entries of {parts}, which are not trainable parameters of the "
              "module, and no other set of those adds up to that number",
        "zh": "多出的 {difference:,} 个恰好是{parts}的元素个数，它们不是这个模块的可训练参数，其中也没有别的组合加起来"
              "等于这个数"},
    "count.kind_more": {
        "en": "the {difference:,} extra are exactly the entries of some of this module's {kind}, which are not "
              "trainable parameters of the module ({parts}): more than one set of them adds up to that number, and "
              "no set with any other of its parts does",
        "zh": "多出的 {difference:,} 个恰好是这个模块中某几个{kind}的元素个数，它们不是这个模块的可训练参数"
              "（{parts}）：其中不止一种组合加起来等于这个数，而含有它别的部分的组合都不等于"},
    "count.kind.buffer": {"en": "buffers", "zh": "buffer"},
    "count.kind.frozen": {"en": "frozen parameters", "zh": "冻结的参数"},
    "count.kind.repeated": {"en": "second names of parameters registered once already", "zh": "已注册参数的第二个名字"},
    "count.once_per_shape": {
        "en": "{got:,} is exactly the entries of this module's trainable parameters with only one parameter counted "
              "for each shape: {shared} of its {all} parameters have the shape of another one, yet each is a "
              "parameter of its own",
        "zh": "{got:,} 恰好是把这个模块的可训练参数按形状各只算一个时的元素个数：它的 {all} 个参数中有 {shared} 个"
              "与另一个参数形状相同，但它们各自都是独立的参数"},
    "count.times": {"en": "{got:,} is exactly {times} times the module's {right:,}",
                    "zh": "{got:,} 恰好是模块的 {right:,} 的 {times} 倍"},
    "count.times_bytes": {
        "en": "{got:,} is exactly {times} times the module's {right:,}, and {times} is the number of bytes one "
              "{dtype} entry takes: a parameter's size in bytes is not its number of entries",
        "zh": "{got:,} 恰好是模块的 {right:,} 的 {times} 倍，而 {times} 正是一个 {dtype} 元素所占的字节数："
              "参数占的字节数并不是它的元素个数"},
    "count.tensors": {"en": "{got} is exactly how many trainable parameter tensors this module has",
                      "zh": "{got} 恰好是这个模块中可训练参数张量的个数"},
    "count.part.trainable": {"en": "the parameter {name} ({size:,})", "zh": "参数 {name}（{size:,}）"},
    "count.part.buffer": {"en": "the buffer {name} ({size:,})", "zh": "buffer {name}（{size:,}）"},
    "count.part.frozen": {"en": "the frozen parameter {name} ({size:,})", "zh": "冻结的参数 {name}（{size:,}）"},
    "count.part.repeated": {"en": "{name} ({size:,}), a second name of a parameter registered once already",
                            "zh": "{name}（{size:,}，是一个已经注册过的参数的第二个名字）"},
    "count.rebuilt": {
        "en": "{got:,} is the number of trainable parameters of the same module built with {change}, and of no other "
              "such build",
        "zh": "{got:,} 正是把同一个模块改成{change}之后的可训练参数个数，别的这类改法都不是"},
    "count.rebuilt.swapped": {"en": "in_features and out_features swapped in every nn.Linear",
                              "zh": "每个 nn.Linear 的 in_features 与 out_features 互换"},
    "count.rebuilt.bias_on": {"en": "a bias in every nn.Linear", "zh": "每个 nn.Linear 都带偏置"},
    "count.rebuilt.bias_off": {"en": "no bias in any nn.Linear", "zh": "所有 nn.Linear 都不带偏置"},
    "count.rebuilt.projections_bias_on": {"en": "biases in W_query, W_key and W_value",
                                          "zh": "W_query、W_key 和 W_value 都带偏置"},
    "count.rebuilt.projections_bias_off": {"en": "no biases in W_query, W_key and W_value",
                                           "zh": "W_query、W_key 和 W_value 都不带偏置"},
    "departure.after": {
        "en": "your code reproduces the notes' {matched}, then departs from them at the {step}: none of the tensors "
              "your code made on this case holds the notes' {step}",
        "zh": "你的代码算出了与笔记相同的{matched}，从{step}开始不同：你的代码在这个例子上算出的张量中，"
              "没有一个等于笔记中的{step}"},
    "departure.first": {
        "en": "your code departs from the notes at their first step, the {step}: none of the tensors your code made "
              "on this case holds it",
        "zh": "你的代码从笔记的第一步（{step}）就不同了：你的代码在这个例子上算出的张量中，没有一个等于它"},
    "departure.after_unproven": {
        "en": "your code reproduces the notes' {matched}; on this case a tensor of yours has the numbers of the notes' "
              "{step} too, though they prove nothing (many computations give them), so this case alone does not show "
              "where your code departs",
        "zh": "你的代码算出了与笔记相同的{matched}；在这个例子上，你的某个张量的数值也与笔记中的{step}相同，"
              "但这些数值说明不了什么（许多算法都会得到它们），所以仅凭这个例子看不出你的代码从哪里开始不同"},
    "departure.first_unused": {
        "en": "your code departs from the notes at their first step, the {step}: an op of yours does make it, beside "
              "the indices it returns with it, but your code goes on with those indices and never reads it",
        "zh": "你的代码从笔记的第一步（{step}）开始不同：你的某个运算确实算出了它，并同时返回了对应的索引，"
              "但你的代码接着用的是那些索引，从来没有读取它"},
    # The step made, then carried on only as merged entry by entry with other numbers (departure.held_merged).
    "departure.first_merged": {
        "en": "your code departs from the notes at their first step, the {step}: an op of yours does make them, but "
              "your code goes on only with a tensor made by choosing, entry by entry, between them and other numbers, "
              "and that tensor is not the notes' {step}",
        "zh": "你的代码从笔记的第一步（{step}）开始不同：你的某个运算确实算出了它，但你的代码接着只用了另一个张量："
              "它是逐个元素在它和另一些数之间挑选得到的，而且不是笔记中的{step}"},
    "departure.after_merged": {
        "en": "your code reproduces the notes' {matched}, then departs from them at the {step}: an op of yours does "
              "make them, but your code goes on only with a tensor made by choosing, entry by entry, between them and "
              "other numbers, and that tensor is not the notes' {step}",
        "zh": "你的代码算出了与笔记相同的{matched}，从{step}开始不同：你的某个运算确实算出了它，但你的代码接着只用了"
              "另一个张量：它是逐个元素在它和另一些数之间挑选得到的，而且不是笔记中的{step}"},
    "departure.after_unused": {
        "en": "your code reproduces the notes' {matched}, then departs from them at the {step}: an op of yours does "
              "make it, beside the indices it returns with it, but your code goes on with those indices and never "
              "reads it",
        "zh": "你的代码算出了与笔记相同的{matched}，从{step}开始不同：你的某个运算确实算出了它，"
              "并同时返回了对应的索引，但你的代码接着用的是那些索引，从来没有读取它"},
    "departure.first_unproven": {
        "en": "on this case a tensor of your code has the numbers of the notes' first step, the {step}, though they "
              "prove nothing (many computations give them), so this case alone does not show where your code departs",
        "zh": "在这个例子上，你的代码的某个张量的数值与笔记的第一步（{step}）相同，但这些数值说明不了什么"
              "（许多算法都会得到它们），所以仅凭这个例子看不出你的代码从哪里开始不同"},
    "departure.nothing": {
        "en": "your code made no tensor on this case that could be compared with the notes' {step}",
        "zh": "你的代码在这个例子上没有算出任何能与笔记中的{step}相比较的张量"},
    # The learner's code raised on the case (autograder.running.diagnosing): the steps it reproduced before that.
    "departure.raised_after": {
        "en": "your code reproduces the notes' {matched}; then it raised before any of its tensors held the notes' "
              "{step}",
        "zh": "你的代码算出了与笔记相同的{matched}；之后，在它算出的张量中还没有一个等于笔记中的{step}时，"
              "就抛出了异常"},
    # A tensor of the code holds the step's numbers, but they prove nothing on this case (one number throughout).
    # Two steps a route may take in either order ("raised before any of its tensors held the notes' {step}").
    "departure.step_or": {"en": "{step} or their {other}", "zh": "{step}或{other}"},
    "departure.raised_after_unproven": {
        "en": "your code reproduces the notes' {matched}; on this case a tensor of yours has the numbers of the "
              "notes' {step} too, though they prove nothing (many computations give them); then it raised",
        "zh": "你的代码算出了与笔记相同的{matched}；在这个例子上，你的某个张量的数值也与笔记中的{step}相同，"
              "但这些数值说明不了什么（许多算法都会得到它们）；之后它抛出了异常"},
    "departure.raised_first_unproven": {
        "en": "on this case a tensor of your code has the numbers of the notes' first step, the {step}, though they "
              "prove nothing (many computations give them); then your code raised",
        "zh": "在这个例子上，你的代码的某个张量的数值与笔记的第一步（{step}）相同，但这些数值说明不了什么"
              "（许多算法都会得到它们）；之后你的代码抛出了异常"},
    "departure.raised_first": {
        "en": "your code raised before any of its tensors held the notes' first step, the {step}",
        "zh": "你的代码在算出的张量中还没有一个等于笔记的第一步（{step}）时，就抛出了异常"},
    # The run with gradients on (autograder.checking.gradient_departure): the first step whose value is the notes'
    # but which autograd did not record, or the step the code raised before on an input of a graph.
    "gradient.cut_first": {
        "en": "the tensor that holds your {step} has the notes' values, but it is not connected to the input in "
              "autograd's graph: no gradient can flow back through it",
        "zh": "保存你的{step}的张量数值与笔记相同，但它在 autograd 的计算图中没有连接到输入：梯度无法经过它传回去"},
    "gradient.cut_after": {
        "en": "your {matched} match the notes' and autograd records them; the tensor that holds your {step} has the "
              "notes' values too, but it is not connected to the input in autograd's graph: no gradient can flow "
              "back through it",
        "zh": "你的{matched}与笔记相同，并且被 autograd 记录了；保存你的{step}的张量数值也与笔记相同，但它在 autograd "
              "的计算图中没有连接到输入：梯度无法经过它传回去"},
    "gradient.raised_first": {
        "en": "given an input that requires grad (as a model's layers hand it over), your code raised before any of "
              "its tensors held the notes' first step, the {step}",
        "zh": "输入需要梯度时（模型中各层传入的那种），你的代码在算出的张量中还没有一个等于笔记的第一步（{step}）时，"
              "就抛出了异常"},
    "gradient.raised_after": {
        "en": "given an input that requires grad (as a model's layers hand it over), your code reproduces the notes' "
              "{matched}, recorded by autograd; then it raised before any of its tensors held the notes' {step}",
        "zh": "输入需要梯度时（模型中各层传入的那种），你的代码算出了与笔记相同的{matched}，并且被 autograd 记录了；"
              "之后，在它算出的张量中还没有一个等于笔记中的{step}时，就抛出了异常"},
    # The operands of the op whose raise ended the learner's run (autograder.checking.tensor_trace.RaisedOp).
    "departure.fact.raised_operands": {"en": "it raised in an operation on {operands}",
                                       "zh": "它是在对{operands}进行的一次运算中抛出异常的"},
    "departure.operand.raised_step": {"en": "your {name} (shape {shape}; their values match the notes')",
                                      "zh": "你的{name}（形状 {shape}，数值与笔记中的相同）"},
    # A reproduced step held under another shape, where the code then raised (departure.HELD_SHAPE).
    "departure.fact.held_shape": {
        "en": "your {held}: the notes' numbers, but in shape {got_shape}, where the notes' have shape "
              "{expected_shape}",
        "zh": "你的{held}数值与笔记中的相同，但形状是 {got_shape}，笔记中的形状是 {expected_shape}"},
    # The op read the step with its axes in another order (a transpose): the shape as read.
    "departure.operand.raised_step_turned": {
        "en": "your {name} with their axes in another order (shape {shape} as the operation read them; their values "
              "match the notes')",
        "zh": "维度顺序被调换过的你的{name}（运算读到的形状是 {shape}，数值与笔记中的相同）"},
    "departure.operand.raised_step_turned_dtype": {
        "en": "your {name} with their axes in another order ({dtype}, shape {shape} as the operation read them; "
              "their values match the notes')",
        "zh": "维度顺序被调换过的你的{name}（{dtype}，运算读到的形状是 {shape}，数值与笔记中的相同）"},
    "departure.operand.raised_tensor": {"en": "a tensor of shape {shape}", "zh": "一个形状为 {shape} 的张量"},
    # Where the operands' dtypes differ: each said with its own.
    "departure.operand.raised_tensor_dtype": {"en": "a {dtype} tensor of shape {shape}",
                                              "zh": "一个形状为 {shape} 的 {dtype} 张量"},
    "departure.operand.raised_step_dtype": {"en": "your {name} ({dtype}, shape {shape}; their values match the notes')",
                                            "zh": "你的{name}（{dtype}，形状 {shape}，数值与笔记中的相同）"},
    # A step's numbers in another kind than the notes' (float where the notes' mask is bool): both dtypes said.
    "departure.operand.raised_step_kind": {
        "en": "your {name} ({dtype}, shape {shape}; their values match the notes', whose dtype is {notes_dtype})",
        "zh": "你的{name}（{dtype}，形状 {shape}；数值与笔记中的相同，但笔记中的 dtype 是 {notes_dtype}）"},
    "departure.operand.raised_step_turned_kind": {
        "en": "your {name} with their axes in another order ({dtype}, shape {shape} as the operation read them; their "
              "values match the notes', whose dtype is {notes_dtype})",
        "zh": "维度顺序被调换过的你的{name}（{dtype}，运算读到的形状是 {shape}；数值与笔记中的相同，"
              "但笔记中的 dtype 是 {notes_dtype}）"},
    "departure.added_again": {
        "en": "every step of your code matches the notes', up to the {last}; then it adds to every row of that {last} "
              "the same vector again, one your code had already added in computing the {last}: your result is the "
              "notes' {last} plus that term a second time",
        "zh": "你的代码每一步都与笔记相同，直到{last}；之后它又在这个{last}的每一行上加了同一个向量，而这个向量在"
              "计算{last}时已经加过一次：你的结果是笔记中的{last}再加一次这一项"},
    "departure.reshaped": {
        "en": "every step of your code matches the notes', up to the {last}: your function returns the notes' {last} "
              "number for number, in their order, but in shape {got} instead of {expected}",
        "zh": "你的代码每一步都与笔记相同，直到{last}：你的函数返回的数值与笔记中的{last}逐个相同、顺序也相同，"
              "但形状是 {got}，而不是 {expected}"},
    # The learner's code raised where no step could be compared (autograder.running.diagnosing): their own line.
    "departure.raised_at_line": {
        "en": "your code raised at its own line `{line}`; on this case no step of the notes shows where its tensors "
              "depart: start from that line",
        "zh": "你的代码在它自己的这一行抛出了异常：`{line}`；在这个例子上，笔记中没有哪一步能显示它的张量在何处偏离"
              "笔记：请从这一行开始查"},
    # The line that raised is not in the learner's answer (the class the notebook gives, or an earlier exercise's):
    # never quoted as theirs; with their line that called it when one is on the way (issue 58).
    "departure.raised_outside_called": {
        "en": "the line that raised is not in your answer: `{line}` (in {function}) raised, called from your line "
              "`{caller}`; on this case no step of the notes shows where its tensors depart: start from "
              "what your line passes to it",
        "zh": "抛出异常的那一行不在你的答案里：`{line}`（在 {function} 中）抛出了异常，它是从你的这一行调用的："
              "`{caller}`；在这个例子上，笔记中没有哪一步能显示它的张量在何处偏离笔记：请从你的这一行传给它的东西开始查"},
    "departure.raised_outside": {
        "en": "the line that raised is not in your answer: `{line}` (in {function}) raised; on this case no step "
              "of the notes shows where its tensors depart: start from what your code gives it",
        "zh": "抛出异常的那一行不在你的答案里：`{line}`（在 {function} 中）抛出了异常；在这个例子上，笔记中没有哪一步"
              "能显示它的张量在何处偏离笔记：请从你的代码交给它的东西开始查"},
    # Every step computed, the last one too, and an earlier step returned (autograder.checking.departure).
    # Every step held; the result returned is the last step times a constant (departure._output_scaled).
    "departure.output_scaled": {
        "en": "a tensor your code made holds the notes' {last}, but your function does not return it as it is",
        "zh": "你的代码算出的某个张量与笔记中的{last}相同，但你的函数返回的并不是它本身"},
    "departure.returned_computed": {
        "en": "your code computes the notes' {last} too, but your function returns the {returned}, a step before the "
              "{last}",
        "zh": "你的代码也算出了笔记中的{last}，但你的函数返回的是{returned}，这是{last}之前的一步"},
    # A failure whose result the relation proven on an earlier check reproduces (autograder.running.diagnosing).
    "departure.same_relation": {
        "en": "the same cause as the departure said above: your result on this case is the notes' {step} with its "
              "axes in the same other order as there",
        "zh": "与上面所说的不同之处原因相同：你在这个例子上的结果，是笔记中的{step}，"
              "其各维度按与那里相同的另一种顺序排列"},
    # A failure whose result is, on its own case, the earlier step an earlier check proved returned.
    # Said first where a gradient that is the learner's own slope is located on the input beside the check's
    # (autograder.running.diagnosing._near_departure): the values there are where the function differs.
    "departure.near_input": {
        "en": "near this check's input your function changes otherwise than the notes' computation, so its values "
              "differ from theirs beside it: on {input}",
        "zh": "在这项检查的输入附近，你的函数的变化方式与笔记中的计算不同，所以在它旁边数值也不同：在 {input} 上"},
    "departure.same_returned": {
        "en": "the same cause as the departure said above: your result on this case is the notes' {step}, returned "
              "as there",
        "zh": "与上面所说的不同之处原因相同：你在这个例子上的结果，是笔记中的{step}，与那里一样被返回了"},
    # The departing step is one the notes compute from a parameter the output does not depend on (proven: moving the
    # parameter's values moves that step's; the gradient contract's check moved them and the output stayed):
    # autograder.running.diagnosing._unused_parameter_step.
    "departure.parameter_unused": {
        "en": "the notes compute their {step} from {name}, and your output does not depend on {name} at all: moving "
              "its values leaves your output as it was",
        "zh": "笔记中的{step}是由 {name} 计算出来的，而你的输出根本不依赖 {name}：改变它的数值后你的输出完全不变"},
    "departure.then_raised": {"en": "then your code raised", "zh": "之后你的代码抛出了异常"},
    "departure.returned": {
        "en": "your function returns the {returned}, a step before the {last}",
        "zh": "你的函数返回的是{returned}，这是{last}之前的一步"},
    # Who a fact speaks of: the learner's tensor in the departing step's place, or what their function returns.
    "departure.subject.stand_in": {"en": "the tensor your code made in its place", "zh": "你的代码在这一步算出的张量"},
    "departure.subject.output": {"en": "the result your function returns", "zh": "你的函数返回的结果"},
    "departure.subject.from_previous": {"en": "the tensor your code made in its place from the notes' {step}",
                                        "zh": "你的代码由笔记中的{step}在这一步算出的张量"},
    "departure.subject.next": {"en": "the next tensor your code made from those steps",
                               "zh": "你的代码接着由这些步骤算出的张量"},
    "departure.subject.next_again": {"en": "it", "zh": "它"},
    "departure.subject.later": {"en": "a tensor your code then made from those steps",
                                "zh": "你的代码随后由这些步骤算出的一个张量"},
    "departure.fact.shape": {
        "en": "{subject} has shape {got}, the notes' {step} {expected}",
        "zh": "{subject}形状是 {got}，而笔记中的{step}形状是 {expected}"},
    "departure.fact.factor": {
        "en": "{subject} is the notes' {step} times {factor}",
        "zh": "{subject}是笔记中的{step}乘以 {factor}"},
    "departure.fact.shown": {
        "en": "{subject} shows {count} entries that the notes' {step} hide",
        "zh": "{subject}中，有 {count} 个元素在笔记中的{step}里是被遮住的，在你的结果里却没有"},
    # The same entries set apart in another encoding (a float -inf/0 mask for a boolean one): which entries each
    # hides is the same, only the values differ (issue 58).
    "departure.fact.recoded": {
        "en": "{subject} sets apart the same entries as the notes' {step}, with other values: {pairs}",
        "zh": "{subject}标出的元素与笔记中的{step}完全相同，只是取值不同：{pairs}"},
    "departure.recoded_pair": {
        "en": "{got} where the notes' hold {expected}",
        "zh": "笔记中为 {expected} 的地方是 {got}"},
    # NaN where the notes' step holds numbers: said as NaN, never as hidden entries (issue 58).
    "departure.fact.nan": {
        "en": "{subject} holds NaN in {count} entries{rows}, where the notes' {step} hold numbers",
        "zh": "{subject}有 {count} 个元素是 NaN{rows}，而笔记中的{step}在那里都是数"},
    "departure.nan_rows": {"en": " (in rows {rows})", "zh": "（在第 {rows} 行）"},
    "departure.fact.hidden": {
        "en": "{subject} hides {count} entries that the notes' {step} keep",
        "zh": "{subject}遮住了 {count} 个元素，而笔记中的{step}保留了它们"},
    "departure.fact.sums_axis": {
        "en": "{subject} sums to 1 along dimension {axis}; in the notes' {step}, the entries sum to 1 along "
              "dimension {expected_axis}",
        "zh": "{subject}沿第 {axis} 个维度加起来等于 1，而笔记中的{step}沿第 {expected_axis} 个维度"
              "加起来等于 1"},
    "departure.fact.not_normalised": {
        "en": "{subject} does not sum to 1 along dimension {axis}, as the notes' {step} "
              "do",
        "zh": "{subject}沿第 {axis} 个维度加起来不等于 1，而笔记中的{step}等于 1"},
    # The step's named axes in another order (autograder.checking.step_relations.reordered_axes), proven by
    # reproducing the learner's tensor from the notes' step: which axes, the shape it is cut into when that is not the
    # reordered step's own, and the axis each of whose slices mixes several of the notes' ones (issue 58).
    "departure.fact.axes_swapped": {
        "en": "{subject} holds the numbers of the notes' {step} with its {first} and {second} axes exchanged"
              "{cut}{mixed}",
        "zh": "{subject}含有笔记中{step}的数值，但{first}维度和{second}维度互换了{cut}{mixed}"},
    "departure.fact.axes_order": {
        "en": "{subject} holds the numbers of the notes' {step} with its axes in the order {order}, where the "
              "notes' are in the order {notes}{cut}{mixed}",
        "zh": "{subject}含有笔记中{step}的数值，但各维度的顺序是{order}，而笔记中的顺序是{notes}{cut}{mixed}"},
    "departure.axes_cut": {"en": ", then cut into shape {shape}", "zh": "，然后被切成形状 {shape}"},
    "departure.axes_mixed.heads": {"en": ": so each of your heads holds numbers from several of the notes' heads",
                                   "zh": "：因此你的每个头都含有笔记中多个头的数值"},
    "departure.axes_mixed.tokens": {"en": ": so each of your tokens holds numbers from several of the notes' tokens",
                                    "zh": "：因此你的每个 token 都含有笔记中多个 token 的数值"},
    # The slices along one dimension in another order, where the step names that dimension (its heads, its tokens).
    "departure.fact.permuted_named": {
        "en": "{subject} holds the notes' {step} with its {name} in another order",
        "zh": "{subject}就是笔记中的{step}，只是{name}的顺序不同"},
    "departure.fact.reversed_named": {
        "en": "{subject} holds the notes' {step} with its {name} in reverse order",
        "zh": "{subject}就是笔记中的{step}，只是{name}的顺序反了过来"},
    # The slices in the notes' order from another one on, wrapping round (the notes' rolled); `first` counts from 1.
    "departure.fact.rolled": {
        "en": "{subject} holds the notes' {step} with its {size} slices along dimension {axis} (of shape {shape}) "
              "in the notes' order, but starting from the notes' number {first} and wrapping round",
        "zh": "{subject}就是笔记中的{step}，沿第 {axis} 个维度（形状 {shape}）的 {size} 个切片仍按笔记中的顺序排列，"
              "但从笔记中的第 {first} 个开始，到最后一个之后再绕回开头"},
    "departure.fact.rolled_named": {
        "en": "{subject} holds the notes' {step} with its {name} in the notes' order, but starting from the notes' "
              "number {first} and wrapping round",
        "zh": "{subject}就是笔记中的{step}，{name}仍按笔记中的顺序排列，但从笔记中的第 {first} 个开始，"
              "到最后一个之后再绕回开头"},
    "departure.axis.batch": {"en": "batch", "zh": "batch"},
    "departure.axis.heads": {"en": "heads", "zh": "头"},
    "departure.axis.tokens": {"en": "tokens", "zh": "token"},
    "departure.axis.features": {"en": "features", "zh": "特征"},
    "departure.fact.rearranged": {
        "en": "{subject} holds the same numbers as the notes' {step}, in other places",
        "zh": "{subject}与笔记中的{step}数值相同，但位置不同"},
    "departure.fact.divided": {
        "en": "{subject} is the notes' {step} divided by {factor}",
        "zh": "{subject}是笔记中的{step}除以 {factor}"},
    "departure.fact.factor_root": {
        "en": "{subject} is the notes' {step} times {factor}, the square root of "
              "{size} ({value})",
        "zh": "{subject}是笔记中的{step}乘以 {factor}，即{size}（{value}）的平方根"},
    "departure.fact.divided_root": {
        "en": "{subject} is the notes' {step} divided by {factor}, the square root of "
              "{size} ({value})",
        "zh": "{subject}是笔记中的{step}除以 {factor}，即{size}（{value}）的平方根"},
    "departure.fact.factor_size": {
        "en": "{subject} is the notes' {step} times {factor}, which is {size}",
        "zh": "{subject}是笔记中的{step}乘以 {factor}，也就是{size}"},
    "departure.fact.divided_size": {
        "en": "{subject} is the notes' {step} divided by {factor}, which is {size}",
        "zh": "{subject}是笔记中的{step}除以 {factor}，也就是{size}"},
    # The sizes a factor is named by (autograder.checking.step_relations.case_sizes): the notes' names for them.
    "departure.size.d_k": {"en": "d_k, the size of each key", "zh": "d_k（每个 key 的大小）"},
    "departure.size.d_out": {"en": "d_out", "zh": "d_out"},
    "departure.size.head_dim": {"en": "head_dim, the size of each head", "zh": "head_dim（每个头的大小）"},
    "departure.size.num_heads": {"en": "num_heads, the number of heads", "zh": "num_heads（头的个数）"},
    "departure.size.num_tokens": {"en": "num_tokens, the number of tokens", "zh": "num_tokens（token 的个数）"},
    "departure.size.summed": {"en": "the number of entries each of the notes' sums adds up",
                              "zh": "笔记中每个和所相加的元素个数"},
    "departure.fact.permuted": {
        "en": "{subject} holds the notes' {step} with its {size} slices along "
              "dimension {axis} (of shape {shape}) in another order",
        "zh": "{subject}就是笔记中的{step}，只是沿第 {axis} 个维度（形状 {shape}）的 {size} 个切片"
              "顺序不同"},
    "departure.fact.reversed": {
        "en": "{subject} holds the notes' {step} with its {size} slices along "
              "dimension {axis} (of shape {shape}) in reverse order",
        "zh": "{subject}就是笔记中的{step}，只是沿第 {axis} 个维度（形状 {shape}）的 {size} 个切片"
              "顺序反了过来"},
    "departure.fact.sums_all": {
        "en": "{subject} sums to 1 over all its entries together; in the notes' {step}, the entries sum to 1 "
              "along dimension {expected_axis}",
        "zh": "{subject}是所有元素加起来等于 1，而笔记中的{step}是沿第 {expected_axis} 个维度"
              "加起来等于 1"},
    # Said of a mask too (False and True read as 0 and 1): "entries the notes keep" would read as the mask's kept
    # (unhidden) entries, and "keep set to 0" as the notes' own zeros.
    "departure.fact.zeroed": {
        "en": "{subject} is the notes' {step}, except that {count} entries that are not 0 in the notes' "
              "are 0 in it",
        "zh": "{subject}就是笔记中的{step}，只是有 {count} 个在笔记中不为 0 的元素在这里为 0"},
    "departure.fact.heads_left_out": {
        "en": "{subject} is the notes' {step} with {which} of its {heads} heads left out: every other head's "
              "features are the notes', in their places",
        "zh": "{subject}就是笔记中的{step}，只是去掉了它 {heads} 个头中的{which}：其余每个头的特征都与笔记中的"
              "相同，位置也相同"},
    "departure.heads_which.last": {"en": "the last {missing}", "zh": "最后 {missing} 个"},
    "departure.heads_which.first": {"en": "the first {missing}", "zh": "最前面 {missing} 个"},
    "departure.heads_which.last_one": {"en": "the last", "zh": "最后一个"},
    "departure.heads_which.first_one": {"en": "the first", "zh": "第一个"},
    "departure.fact.extra": {
        "en": "{subject} is the notes' {step} but keeps {count} entries that are 0 in "
              "the notes'",
        "zh": "{subject}就是笔记中的{step}，只是保留了 {count} 个在笔记中为 0 的元素"},
    # A relation of blocks (autograder.checking.step_relations.transposed_blocks, restacked_blocks) or a mask's
    # bands (flipped_bands): the first step's stand-in has no earlier step to be said from (issue 58).
    "departure.fact.transposed": {
        "en": "{subject} is the notes' {step} transposed (its last two dimensions swapped)",
        "zh": "{subject}是笔记中的{step}的转置（最后两个维度互换）"},
    "departure.fact.blocks_transposed": {
        "en": "{subject} holds the notes' {step} as {count} blocks of shape {block} along dimension 0, in their "
              "order, but each block transposed",
        "zh": "{subject}由笔记中的{step}沿第 0 个维度的 {count} 个形状为 {block} 的块组成：顺序相同，"
              "但每一块都被转置了"},
    "departure.fact.restacked": {
        "en": "{subject} has shape {got}, the notes' {step} {expected}: it is the notes' {step} cut into {count} "
              "equal blocks along dimension {axis}, each block as it is, joined along dimension {other} instead",
        "zh": "{subject}形状是 {got}，而笔记中的{step}形状是 {expected}：它是把笔记中的{step}沿第 {axis} 个维度"
              "切成 {count} 个相同大小的块，每块不变，再沿第 {other} 个维度拼接起来的"},
    "departure.fact.bands": {
        "en": "{subject} is the notes' {step} with every entry {bands} flipped (0 and 1, or False and True, swapped "
              "there) and every other entry as in the notes'",
        "zh": "{subject}就是笔记中的{step}，只是{bands}的每个元素都取了相反的值（0 与 1，或 False 与 True 互换），"
              "其余元素都与笔记相同"},
    "departure.band.main": {"en": "on the main diagonal (column j = row i)", "zh": "主对角线上（第 j 列 = 第 i 行）"},
    "departure.band.above": {"en": "on the diagonal {k} above the main one (column j = row i + {k})",
                             "zh": "主对角线上方第 {k} 条对角线上（第 j 列 = 第 i 行 + {k}）"},
    "departure.band.below": {"en": "on the diagonal {k} below the main one (column j = row i - {k})",
                             "zh": "主对角线下方第 {k} 条对角线上（第 j 列 = 第 i 行 - {k}）"},
    "departure.fact.plus": {
        "en": "{subject} is the notes' {step} plus {offset} in every entry",
        "zh": "{subject}是笔记中的{step}每个元素都加上 {offset}"},
    "departure.fact.minus": {
        "en": "{subject} is the notes' {step} minus {offset} in every entry",
        "zh": "{subject}是笔记中的{step}每个元素都减去 {offset}"},
    "departure.fact.power": {
        "en": "each entry of {subject} is the notes' {step} raised to the power {power}",
        "zh": "{subject}的每个元素都是笔记中的{step}的 {power} 次幂"},
    "departure.fact.power_base": {
        "en": "each entry of {subject} is the notes' {step} raised to the power {power}: powers of {base}, where the "
              "notes' are powers of e",
        "zh": "{subject}的每个元素都是笔记中的{step}的 {power} 次幂：它们是 {base} 的幂，而笔记中的是 e 的幂"},
    "departure.fact.all_zero": {
        "en": "{subject} is 0 in every entry, where the notes' {step} are not",
        "zh": "{subject}的每个元素都是 0，而笔记中的{step}不是"},
    "departure.fact.repeated": {
        "en": "your code computes the notes' {other} a second time, and none of its tensors is the notes' {step}",
        "zh": "你的代码把笔记中的{other}又算了一遍，而它算出的张量中没有一个是笔记中的{step}"},
    "departure.fact.other_step": {
        "en": "{subject} holds the notes' {other}, not their {step}",
        "zh": "{subject}等于笔记中的{other}，而不是{step}"},
    # The op that made the learner's tensor read only tensors of theirs that match the notes' steps.
    "departure.fact.dropped": {
        "en": "a tensor your code made from your {source} sets {count} of their entries to 0 and multiplies the "
              "others by {factor}, what dropout does while training",
        "zh": "你的代码由你的{source}算出的一个张量把其中 {count} 个元素设为 0，其余的都乘以 {factor}，"
              "这正是训练时 dropout 所做的"},
    "departure.fact.added_again_to": {
        "en": "to every row of your {sources}, your code adds once more a vector it had already added in computing "
              "them, and goes on from that sum",
        "zh": "你的代码在你的{sources}的每一行上又加了一个向量，而这个向量在计算它们时已经加过一次；"
              "之后它用这个和接着往下算"},
    "departure.fact.made_from": {
        "en": "that tensor is computed from your {sources}, which match the notes'",
        "zh": "这个张量是由你的{sources}算出的，它们与笔记中的相同"},
    "departure.fact.made_from_input": {
        "en": "that tensor is computed from your {sources}, which match the notes', and from the input your function "
              "was given",
        "zh": "这个张量是由你的{sources}（与笔记中的相同）和传给你的函数的输入算出的"},
    "departure.fact.result_made_from": {
        "en": "the result your function returns is computed from your {sources}, which match the notes'",
        "zh": "你的函数返回的结果是由你的{sources}算出的，它们与笔记中的相同"},
    "departure.fact.result_made_from_input": {
        "en": "the result your function returns is computed from your {sources}, which match the notes', and from "
              "the input your function was given",
        "zh": "你的函数返回的结果是由你的{sources}（与笔记中的相同）和传给你的函数的输入算出的"},
    # The learner's tensor as another simple computation of the step's operands (step_relations.Alternative).
    "departure.fact.alt_reduction": {
        "en": "{subject} is the {op} of {operand} along dimension {axis}, not the notes' {step}",
        "zh": "{subject}是{operand}沿第 {axis} 个维度的{op}，而不是笔记中的{step}"},
    "departure.fact.alt_reduction_all": {
        "en": "{subject} is the {op} of all the entries of {operand} together, not the notes' {step}",
        "zh": "{subject}是{operand}全部元素合在一起的{op}，而不是笔记中的{step}"},
    "departure.fact.alt_transform": {
        "en": "{subject} is the notes' {step} with each entry replaced by its {op}",
        "zh": "{subject}是把笔记中的{step}的每个元素换成它的{op}"},
    "departure.fact.alt_product": {
        "en": "{subject} is the matrix product of {first} and {second}, not the notes' {step}",
        "zh": "{subject}是{first}与{second}的矩阵乘积，而不是笔记中的{step}"},
    "departure.fact.alt_dot_products": {
        "en": "{subject} holds the dot products of each row of {first} with each row of {second}, not the notes' "
              "{step}",
        "zh": "{subject}是{first}的每一行与{second}的每一行的点积，而不是笔记中的{step}"},
    "departure.fact.alt_cosine": {
        "en": "{subject} holds the cosine similarities of each row of {first} with each row of {second}, not the "
              "notes' {step}",
        "zh": "{subject}是{first}的每一行与{second}的每一行的余弦相似度，而不是笔记中的{step}"},
    # Another operation in the step's place between two operands (step_relations.ELEMENTWISE and PAIRED).
    "departure.fact.alt_elementwise_minus": {
        "en": "{subject} is {first} minus {second}, entry by entry, not the notes' {step}",
        "zh": "{subject}是{first}逐元素减去{second}，而不是笔记中的{step}"},
    "departure.fact.alt_elementwise_plus": {
        "en": "{subject} is {first} plus {second}, entry by entry, not the notes' {step}",
        "zh": "{subject}是{first}逐元素加上{second}，而不是笔记中的{step}"},
    "departure.fact.alt_elementwise_times": {
        "en": "{subject} is {first} times {second}, entry by entry, not the notes' {step}",
        "zh": "{subject}是{first}逐元素乘以{second}，而不是笔记中的{step}"},
    "departure.fact.alt_elementwise_divided": {
        "en": "{subject} is {first} divided by {second}, entry by entry, not the notes' {step}",
        "zh": "{subject}是{first}逐元素除以{second}，而不是笔记中的{step}"},
    "departure.fact.alt_row_dots": {
        "en": "{subject} holds only the dot product of each row of {first} with the same row of {second}, not those "
              "of every pair of rows that the notes' {step} hold",
        "zh": "{subject}只有{first}的每一行与{second}的同一行的点积，而不是笔记中的{step}所含的每一对行的点积"},
    "departure.fact.alt_feature_products": {
        "en": "{subject} holds the dot products of each column (feature) of {first} with each column of {second}, "
              "pairs of features instead of pairs of rows (tokens), not the notes' {step}",
        "zh": "{subject}是{first}的每一列（特征）与{second}的每一列的点积：配对的是特征而不是行（词元），"
              "而不是笔记中的{step}"},
    "departure.fact.alt_feature_products_self": {
        "en": "{subject} holds the dot products of each column (feature) of {first} with each of its columns, pairs "
              "of features instead of pairs of rows (tokens), not the notes' {step}",
        "zh": "{subject}是{first}的每一列（特征）与它的每一列的点积：配对的是特征而不是行（词元），"
              "而不是笔记中的{step}"},
    # The same pairing where a column of an operand is not a feature (the attention weights' columns are keys).
    "departure.fact.alt_column_products": {
        "en": "{subject} holds the dot products of each column of {first} with each column of {second}, not the "
              "notes' {step}",
        "zh": "{subject}是{first}的每一列与{second}的每一列的点积，而不是笔记中的{step}"},
    "departure.fact.alt_column_products_self": {
        "en": "{subject} holds the dot products of each column of {first} with each of its columns, not the notes' "
              "{step}",
        "zh": "{subject}是{first}的每一列与它的每一列的点积，而不是笔记中的{step}"},
    "departure.fact.alt_cosine_self": {
        "en": "{subject} holds the cosine similarities of each row of {first} with each of its rows (each row scaled "
              "to length 1 before the dot products), not the notes' {step}",
        "zh": "{subject}是{first}的每一行与它的每一行的余弦相似度（点积之前每一行都被缩放到长度 1），"
              "而不是笔记中的{step}"},
    "departure.fact.alt_first_term": {
        "en": "{subject} is only the first of the terms (one per column of {first}) that the matrix product of "
              "{first} and {second} adds up, not the notes' {step}",
        "zh": "{subject}只是{first}与{second}的矩阵乘积所相加的各项（{first}的每一列一项）中的第一项，"
              "而不是笔记中的{step}"},
    "departure.fact.alt_last_term": {
        "en": "{subject} is only the last of the terms (one per column of {first}) that the matrix product of "
              "{first} and {second} adds up, not the notes' {step}",
        "zh": "{subject}只是{first}与{second}的矩阵乘积所相加的各项（{first}的每一列一项）中的最后一项，"
              "而不是笔记中的{step}"},
    "departure.operand.step": {"en": "the notes' {name}", "zh": "笔记中的{name}"},
    "departure.operand.inputs": {"en": "the input your function was given", "zh": "传给你的函数的输入"},
    "departure.op.max": {"en": "maximum", "zh": "最大值"},
    "departure.op.min": {"en": "minimum", "zh": "最小值"},
    "departure.op.mean": {"en": "mean", "zh": "平均值"},
    "departure.op.sum": {"en": "sum", "zh": "和"},
    "departure.op.logsumexp": {"en": "log of the sum of exponentials", "zh": "指数之和的对数"},
    "departure.op.abs": {"en": "absolute value", "zh": "绝对值"},
    "departure.op.square": {"en": "square", "zh": "平方"},
    "departure.op.exp": {"en": "exponential", "zh": "指数"},
    "departure.op.log": {"en": "logarithm", "zh": "对数"},
    "departure.fact.differs": {
        "en": "{subject} holds other numbers than the notes' {step}",
        "zh": "{subject}与笔记中的{step}数值不同"},
    "step.queries": {"en": "queries", "zh": "query"},
    "step.keys": {"en": "keys", "zh": "key"},
    "step.values": {"en": "values", "zh": "value"},
    "step.split_queries": {"en": "queries split into heads", "zh": "拆分成多个头的 query"},
    "step.split_keys": {"en": "keys split into heads", "zh": "拆分成多个头的 key"},
    "step.split_values": {"en": "values split into heads", "zh": "拆分成多个头的 value"},
    "step.scores": {"en": "attention scores", "zh": "注意力分数"},
    "step.scaled_scores": {"en": "scaled attention scores", "zh": "缩放后的注意力分数"},
    "step.masked_scores": {"en": "masked attention scores", "zh": "填入掩码后的注意力分数"},
    "step.weights": {"en": "attention weights", "zh": "注意力权重"},
    "step.context_vectors": {"en": "context vectors", "zh": "上下文向量"},
    "step.merged": {"en": "context vectors with the heads merged", "zh": "合并各个头之后的上下文向量"},
    # The output projection applied to the merged heads: what the layer outputs, never its weights (12w's wz-te-06
    # read "held the notes' output projection" as the layer's weights, which that code had copied).
    "step.out_proj": {"en": "output projection's output", "zh": "输出投影的输出"},
    "step.maximum": {"en": "maximum of each row", "zh": "每一行的最大值"},
    "step.shifted": {"en": "inputs minus their maximum", "zh": "减去最大值之后的输入"},
    "step.exponentials": {"en": "exponentials", "zh": "指数"},
    "step.sums": {"en": "sums of the exponentials", "zh": "指数之和"},
    "step.division": {"en": "exponentials divided by their sum", "zh": "指数除以它们的和"},
    "step.causal_mask": {"en": "causal mask", "zh": "因果掩码"},
    "step.keep_triangle": {"en": "lower triangle of ones", "zh": "下三角全 1 矩阵"},
    "step.masked_weights": {"en": "attention weights with the future zeroed", "zh": "未来位置置零后的注意力权重"},
    "step.row_sums": {"en": "sums of each row", "zh": "每一行的和"},
    "step.renormalised_weights": {"en": "renormalised attention weights", "zh": "重新归一化后的注意力权重"},
    "step.heads_viewed": {"en": "input viewed as (batch, tokens, heads, head size)",
                          "zh": "按（batch、token、头、每个头的大小）排列的输入"},
    "step.heads_split": {"en": "input split into heads", "zh": "拆分成多个头的输入"},
    "step.heads_merged": {"en": "heads merged side by side", "zh": "并排合并后的各个头"},
    "step.heads_concatenated": {"en": "context vectors of all heads side by side",
                                "zh": "所有头并排拼接后的上下文向量"},
    "step.stacked_projections": {"en": "projection weights stacked as one input projection",
                                 "zh": "堆叠成一个输入投影的三个投影权重"},
    "step.stacked_biases": {"en": "projection biases stacked as one input bias",
                            "zh": "堆叠成一个输入偏置的三个投影偏置"},
    # The wrapper's heads one by one (autograder.course.n04_multi_head_attention.ex1_wrapper: NAMED_HEADS of them).
    # Numbered from 0, as the notes number them (`heads[0]`, "head 1 of sequence 0" is the second one).
    **{f"step.head_{index}": {"en": f"context vectors of head {index} (heads counted from 0, as in the notes)",
                              "zh": f"头 {index}（与笔记一样从 0 开始编号）的上下文向量"}
       for index in range(8)},
    # One message per root cause: the failures a check's table folds into one line.
    "fold.same_reason": {
        "en": "{count} more checks fail for the same reason: {titles}",
        "zh": "另有 {count} 项检查因同样的原因未通过：{titles}"},
    "fold.same_reason_one": {
        "en": "1 more check fails for the same reason: {titles}",
        "zh": "另有 1 项检查因同样的原因未通过：{titles}"},
    # Failures folded under a named mistake whose output is wrong in the same way (the same axes grown and shrunk,
    # as many numbers): said as that fact, never as proven by the mistake's variant (autograder.checking.feedback).
    "fold.same_shape": {
        "en": "{count} more checks get an output whose shape is wrong in the same way (the same axes grow and "
              "shrink): {titles}",
        "zh": "另有 {count} 项检查得到的输出形状错得一样（同样的维度变大、同样的维度变小）：{titles}"},
    "fold.same_shape_one": {
        "en": "1 more check gets an output whose shape is wrong in the same way (the same axes grow and shrink): "
              "{titles}",
        "zh": "另有 1 项检查得到的输出形状错得一样（同样的维度变大、同样的维度变小）：{titles}"},
    # Errors folded under a named mistake without evidence that it causes them: said as errors, never as its effect.
    "fold.follow_on": {
        "en": "{count} more checks stop with an error; nothing shows that the mistake above causes it, so fix that "
              "first and run again: {titles}",
        "zh": "另有 {count} 项检查出错；没有证据表明它们是上面这个错误造成的，请先改正上面的错误再运行一次：{titles}"},
    "fold.follow_on_one": {
        "en": "1 more check stops with an error; nothing shows that the mistake above causes it, so fix that first "
              "and run again: {titles}",
        "zh": "另有 1 项检查出错；没有证据表明它是上面这个错误造成的，请先改正上面的错误再运行一次：{titles}"},
    "fold.raised_by_torch": {
        "en": "there your code raised {type}, in PyTorch's own words: “{detail}”",
        "zh": "在那里你的代码抛出了 {type}，PyTorch 的原话（英文）是：“{detail}”"},
    "fold.raised_by_python": {
        "en": "there your code raised {type}, in Python's own words: “{detail}”",
        "zh": "在那里你的代码抛出了 {type}，Python 的原话（英文）是：“{detail}”"},
    "fold.stub": {
        "en": "not implemented yet: the stub still raises NotImplementedError, so {count} of the {total} checks "
              "cannot run yet",
        "zh": "尚未实现：占位代码仍然抛出 NotImplementedError，所以 {total} 项检查中有 {count} 项还无法运行"},
    "fold.stub_all": {
        "en": "not implemented yet: the stub still raises NotImplementedError, so none of the {total} checks can run "
              "yet",
        "zh": "尚未实现：占位代码仍然抛出 NotImplementedError，所以 {total} 项检查都还无法运行"},
    "fold.separator": {"en": "; ", "zh": "；"},
    "label.input_shape": {"en": "input shape", "zh": "输入形状"},
    "label.input_mask": {"en": "attention_mask", "zh": "attention_mask"},
    "label.shape": {"en": "shape", "zh": "形状"},
    "label.expected": {"en": "expected", "zh": "期望"},
    "label.got": {"en": "got", "zh": "实际"},
    "label.largest_difference": {
        "en": "largest difference {diff:.3g} at index {index}",
        "zh": "最大差异 {diff:.3g}，位置 {index}",
    },
    "label.nan_got": {"en": "NaN at index {index}, where a number is expected",
                      "zh": "位置 {index} 是 NaN，而那里应当是一个数"},
    "label.nan_expected": {"en": "a number at index {index}, where NaN is expected",
                           "zh": "位置 {index} 是一个数，而那里应当是 NaN"},
    "label.excerpt_from": {"en": "from index {index}", "zh": "从位置 {index} 起"},
    "label.detail_withheld": {
        "en": "details withheld in a hidden check; the public check cell shows them on its own inputs",
        "zh": "隐藏检查不显示细节；公开检查单元格会在它自己的输入上显示",
    },
    "label.input": {"en": "input", "zh": "输入"},
    # The pictures (autograder.checking.pictures): drawn as SVG, so the browser shows the Chinese labels too.
    "label.heatmap_expected": {"en": "expected", "zh": "期望"},
    "label.heatmap_got": {"en": "yours", "zh": "你的结果"},
    "label.heatmap_query": {"en": "query (row)", "zh": "query（行）"},
    "label.heatmap_key": {"en": "key (column)", "zh": "key（列）"},
    "label.heatmap_hidden": {"en": "hidden (True)", "zh": "被遮住（True）"},
    "label.heatmap_visible": {"en": "visible (False)", "zh": "可见（False）"},
    "label.heatmap_not_finite": {"en": "not finite (inf, nan)", "zh": "非有限值（inf、nan）"},
    "label.heatmap_slice": {"en": "showing the slice x[{index}] of a tensor of shape {shape}",
                            "zh": "显示形状为 {shape} 的张量中的切片 x[{index}]"},
    "label.picture_head": {"en": "head {head}", "zh": "头 {head}"},
    "label.picture_token": {"en": "token", "zh": "token"},
    "label.picture_head_legend": {"en": "each cell is one feature; colour: the head it came from; number: its token",
                                  "zh": "每个格子是一个特征；颜色：它来自哪个头；数字：它来自哪个 token"},
    "label.picture_unknown": {"en": "?: a value found nowhere in the input", "zh": "格子中的“?”：输入中找不到这个数值"},
    "label.picture_misplaced": {"en": "red outline: not where it should be", "zh": "红框：位置不对"},
    # A picture's words for a reader who cannot see it (a screen reader, an untrusted notebook, a terminal).
    "label.heatmap_alt": {"en": "Heatmap of the expected matrix and yours, side by side, {shape}: queries as rows, "
                                "keys as columns",
                          "zh": "热力图：期望的矩阵和你的结果并排，{shape}：每行一个 query，每列一个 key"},
    "label.heatmap_alt_shape": {"en": "{rows} × {columns}", "zh": "{rows} × {columns}"},
    "label.heatmap_alt_differ": {
        "en": "they differ in {count} of {total} cells, most at row {row}, column {column} (expected {expected}, "
              "yours {got})",
        "zh": "{total} 个格子中有 {count} 个不同，差异最大处在第 {row} 行、第 {column} 列"
              "（期望 {expected}，你的结果 {got}）"},
    "label.heatmap_alt_shapes": {"en": "yours is {got} where {expected} is expected",
                                 "zh": "你的结果是 {got}，期望的是 {expected}"},
    "label.heatmap_alt_same": {"en": "the cells shown are equal", "zh": "图中的格子都相同"},
    "label.head_layout_alt": {
        "en": "Where each feature of the heads landed, expected and yours side by side ({rows} tokens, {columns} "
              "features each, head_dim {head_dim}): {misplaced} of {total} features out of place",
        "zh": "各个头的特征落在哪里：期望和你的结果并排（{rows} 个 token，每个 {columns} 个特征，"
              "head_dim 为 {head_dim}）：{total} 个特征中有 {misplaced} 个位置不对"},
    # Exceptions raised by the student's code, explained in the student's terms.
    "error.not_implemented": {
        "en": "not implemented yet: the stub still raises NotImplementedError",
        "zh": "尚未实现：占位代码仍然抛出 NotImplementedError",
    },
    "error.missing_name": {
        "en": "`{name}` is not defined: run the cell that defines it (and keep the name as given)",
        "zh": "`{name}` 未定义：请先运行定义它的单元格（并保持给定的名字）",
    },
    "error.view_non_contiguous": {
        "en": "a view failed on a non-contiguous tensor ({type}): after a transpose the numbers are no longer "
              "laid out in the order a view needs. Which step could put them back in that order, or which "
              "operation copies them when it must?",
        "zh": "对非连续张量做 view 失败（{type}）：转置之后，数在内存中的排列不再是 view 所需的顺序。哪一步能把它们"
              "排回那个顺序？或者，哪种运算会在必要时复制它们？",
    },
    "error.shape_mismatch": {
        "en": "shapes do not fit together ({type}: {detail}); print the shape after every step and "
        "compare it with the shape comments",
        "zh": "形状对不上（{type}：{detail}）；请在每一步之后打印形状，并与注释中的形状对照",
    },
    "error.dtype_mismatch": {
        # The symptom only, whichever op met the two dtypes: which tensor has the other dtype is the learner's to find.
        "en": "tensors of different dtypes meet in one operation ({type}: {detail}): which of them has a dtype other "
              "than the input's, and where does it get it from?",
        "zh": "同一个运算中的张量 dtype 不同（{type}：{detail}）：其中哪个张量的 dtype 与输入的不同？它的 dtype "
              "是从哪里来的？",
    },
    "error.dtype_mismatch_at": {
        "en": "tensors of different dtypes meet in one operation in `{line}` ({type}: {detail}): which of them has a "
              "dtype other than the input's, and where does it get it from?",
        "zh": "`{line}` 中的一个运算里，张量的 dtype 不同（{type}：{detail}）：其中哪个张量的 dtype 与输入的不同？"
              "它的 dtype 是从哪里来的？",
    },
    "error.device_mismatch": {
        # The symptom only: a function has no buffer, and a module's plain attribute is a fact its own judge reads.
        "en": "tensors on different devices meet in one operation ({type}): which of them did your code create, "
              "and on which device?",
        "zh": "同一个运算中的张量位于不同设备（{type}）：其中哪个张量是你的代码创建的？它在哪个设备上？",
    },
    "error.wrong_type": {
        "en": "returned {got}, expected a torch.Tensor",
        "zh": "返回了 {got}，应当返回 torch.Tensor",
    },
    "error.unexpected_keyword": {
        "en": "was called with the keyword argument `{keyword}`, as the exercise's signature gives, and your code "
        "has no parameter of that name ({type}: {detail}); keep the parameter names of the given signature",
        "zh": "按练习给定的签名用参数名 `{keyword}` 传入了参数，但你的代码没有这个名字的参数（{type}：{detail}）；"
        "请保持给定签名中的参数名",
    },
    "error.missing_argument": {
        "en": "your code requires the argument `{name}`, which the exercise's signature does not give ({type}: "
        "{detail}); keep the given signature",
        "zh": "你的代码要求参数 `{name}`，而练习给定的签名中没有它（{type}：{detail}）；请保持给定的函数签名",
    },
    "error.wrong_signature": {
        "en": "could not be called as in the book ({type}: {detail}); keep the given signature",
        "zh": "无法按书中的方式调用（{type}：{detail}）；请保持给定的函数签名",
    },
    "error.timeout": {
        "en": "took too long (over {seconds:g} s): look for an endless loop",
        "zh": "运行时间过长（超过 {seconds:g} 秒）：检查是否有死循环",
    },
    "error.no_result": {
        "en": "no result came back from your code (it crashed the process or ran out of time)",
        "zh": "你的代码没有返回结果（进程崩溃或超时）",
    },
    "error.uncomparable": {
        "en": "the output could not be compared with the reference ({type})",
        "zh": "输出无法与参考实现比较（{type}）",
    },
    "attention.scaled_by_form": {
        "en": "your scores were divided by {divisor:.4g} ({form}), not by the square root of {size} "
              "({expected:.4g})",
        "zh": "你的分数除以的是 {divisor:.4g}（{form}），而不是 {size} 的平方根（{expected:.4g}）",
    },
    "attention.scaled_by_form.hidden": {
        "en": "your scores were divided by {form}, not by the square root of {size}",
        "zh": "你的分数除以的是 {form}，而不是 {size} 的平方根",
    },
    "attention.scaled_by_value": {
        "en": "your scores were divided by {divisor:.4g}, not by the square root of {size} ({expected:.4g})",
        "zh": "你的分数除以的是 {divisor:.4g}，而不是 {size} 的平方根（{expected:.4g}）",
    },
    "attention.scaled_by_value.hidden": {
        "en": "your scores were divided by another number than the square root of {size}",
        "zh": "你的分数除以的数不是 {size} 的平方根",
    },
    "attention.mask_fill": {
        "en": "future keys still get weight: their scores were filled with {fill:.4g} (before the scaling), and the "
              "softmax turns that number into a weight",
        "zh": "未来位置的 key 仍然分到了权重：它们的分数被填成了 {fill:.4g}（缩放之前），softmax 会把这个数"
              "变成一个权重"},
    "attention.mask_fill.hidden": {
        "en": "future keys still get weight: the number their scores were filled with is not low enough",
        "zh": "未来位置的 key 仍然分到了权重：它们的分数被填入的数不够低"},
    "attention.returned_weights": {
        "en": "forward returns the attention weights, shape {got_shape}, one row per query over the keys: the "
              "context vectors are what those weights make of the values",
        "zh": "forward 返回的是注意力权重，形状为 {got_shape}，每个 query 一行、对应所有 key："
              "上下文向量是这些权重作用于 values 之后的结果"},
    "attention.weights_differ": {
        "en": "the attention weights themselves already differ, first for query token {query}: look at the scores, "
              "the mask and the softmax",
        "zh": "注意力权重本身就已经不对了，第一个出错的是 query token {query}：请检查分数、掩码和 softmax"},
    "attention.after_weights": {
        "en": "the attention weights are right; the output goes wrong after them: it is not their weighted sum of "
              "the values",
        "zh": "注意力权重是对的；输出在它们之后才出错：它不是用这些权重对 values 的加权求和"},
    "attention.after_weights_heads": {
        "en": "the attention weights of every head are right; the output goes wrong after them: the weighted sum of "
              "the values, the merge of the heads or out_proj",
        "zh": "每个头的注意力权重都是对的；输出在它们之后才出错：问题在对 values 的加权求和、头的合并或 out_proj"},
    "attention.before_out_proj": {
        "en": "the attention weights of every head are right, but what reaches out_proj is not: the weighted sum of "
              "the values or the merge of the heads goes wrong",
        "zh": "每个头的注意力权重都是对的，但送进 out_proj 的结果不对：问题出在对 values 的加权求和或头的合并"},
    "attention.after_out_proj": {
        "en": "everything up to out_proj is right (weights, values, merged heads); the output goes wrong at out_proj "
              "or after it",
        "zh": "直到 out_proj 之前都是对的（权重、values、合并后的头）；输出在 out_proj 或它之后才出错"},
    "function.no_gradient": {
        "en": "no gradient flows back through the function to its input: compute with tensor operations only, "
              "without detaching, reading raw data, going through NumPy or switching gradients off",
        "zh": "梯度无法通过这个函数传回输入：只用张量运算来计算，不要分离张量、读取原始数据、经过 NumPy "
              "或关闭梯度计算",
    },
    "function.untracked_edit": {
        "en": "the values are right, but the function edited a tensor of the computation in place while gradients "
              "were switched off, or through a detached alias of it, so autograd did not record that edit (its graph "
              "still holds the values from before it): every step must be one autograd records",
        "zh": "数值是对的，但这个函数在关闭梯度计算时（或者通过它的一个已分离的别名）原地修改了计算中的一个张量，所以 "
              "autograd 没有记录这次修改（它的计算图里仍是修改之前的值）：每一步都必须由 autograd 记录",
    },
    "function.edit_unseen": {
        "en": "the function switched off torch's dispatch modes (with which the grader watches a run) and edited a "
              "tensor in place while they were off: whether autograd recorded that edit cannot be checked, so this "
              "check does not pass; leave torch's modes as they are",
        "zh": "这个函数关闭了 torch 的 dispatch mode（评分程序借助它观察运行过程），并在关闭期间原地修改了一个张量："
              "无法检查 autograd 是否记录了这次修改，所以这项检查不通过；请不要改动 torch 的 mode",
    },
    "function.backward_raised": {
        "en": "going back through the function to its input fails: backward() raised {type} ({detail})",
        "zh": "通过这个函数反向传播回输入时失败：backward() 抛出了 {type}（{detail}）",
    },
    "function.call_raised_in_graph": {
        "en": "called on an input that is part of a graph (as a model's layers hand it over), the function itself "
              "raises {type} ({detail}), before anything goes back through it",
        "zh": "用属于计算图的输入（模型中各层传入的那种）调用这个函数时，函数本身就抛出了 {type}（{detail}），"
              "还没有开始反向传播",
    },
    "function.gradient_not_finite": {
        "en": "the gradient that flows back through the function to its input holds nan or inf",
        "zh": "通过这个函数传回输入的梯度中有 nan 或 inf",
    },
    "function.gradient_wrong": {
        "en": "the values are right, but the gradient that flows back to the input is not the one the computation "
              "gives: some step was computed where autograd does not record (a detached tensor, raw data, a block "
              "with gradients switched off, inference mode), and counts as a constant",
        "zh": "数值是对的，但传回输入的梯度不是这个计算应有的梯度：某一步是在 autograd 不记录的地方计算的"
              "（分离出来的张量、原始数据、关闭了梯度计算的代码块、推理模式），于是被当成了常数",
    },
    "module.gradient_wrong": {
        "en": "the output is right, but the gradient that reaches {name} is not the one the computation gives: a "
              "step of forward was computed where autograd does not record (a detached tensor, raw data, a block "
              "with gradients switched off, inference mode), and counts as a constant",
        "zh": "输出是对的，但传到 {name} 的梯度不是这个计算应有的梯度：forward 中有一步是在 autograd 不记录的地方"
              "计算的（分离出来的张量、原始数据、关闭了梯度计算的代码块、推理模式），于是被当成了常数"},
    "module.no_gradient": {
        "en": "the output is right and depends on {name}, but no gradient reaches it: a step of forward that uses it "
              "was computed where autograd does not record (a detached tensor, raw data, a block with gradients "
              "switched off, inference mode)",
        "zh": "输出是对的，而且依赖 {name}，但梯度传不到它：forward 中用到它的某一步是在 autograd 不记录的地方计算的"
              "（分离出来的张量、原始数据、关闭了梯度计算的代码块、推理模式）"},
    "module.input_gradient_wrong": {
        "en": "the output is right, but the gradient that reaches the input is not the one the computation gives: a "
              "step of forward was computed where autograd does not record (a detached tensor, raw data, a block "
              "with gradients switched off, inference mode), and counts as a constant",
        "zh": "输出是对的，但传回输入的梯度不是这个计算应有的梯度：forward 中有一步是在 autograd 不记录的地方"
              "计算的（分离出来的张量、原始数据、关闭了梯度计算的代码块、推理模式），于是被当成了常数"},
    "module.input_gradient_own_slope": {
        "en": "the output is right, but the gradient that reaches the input is not the one the notes' computation "
              "gives: autograd followed your forward (its gradient is how your module's own output changes near "
              "this input), so near this input your module changes otherwise than the notes' does (flat where "
              "theirs is not, for instance)",
        "zh": "输出是对的，但传回输入的梯度不是笔记中的计算应有的梯度：autograd 跟踪了你的 forward（它的梯度就是你的"
              "模块自身的输出在这个输入附近的变化），所以在这个输入附近，你的模块的变化方式与笔记中的不同（例如在笔记的"
              "计算并不平坦的地方它是平坦的）"},
    "module.gradient_own_slope": {
        "en": "the output is right, but the gradient that reaches {name} is not the one the notes' computation "
              "gives: autograd followed your forward (its gradient is how your module's own output changes with "
              "{name} near its values), so your module changes otherwise than the notes' does there (flat where "
              "theirs is not, for instance)",
        "zh": "输出是对的，但传到 {name} 的梯度不是笔记中的计算应有的梯度：autograd 跟踪了你的 forward（它的梯度就是"
              "你的模块自身的输出在 {name} 当前值附近随它的变化），所以你的模块在那里的变化方式与笔记中的不同（例如在"
              "笔记的计算并不平坦的地方它是平坦的）"},
    # Said where the values on this check's input are softmax's: the function may still differ from softmax on
    # other inputs (a scale inside the exponential, on two equal scores), so not "the values are a softmax".
    "function.gradient_own_slope": {
        "en": "on this check's input your values are softmax's, but the gradient flowing back to the input is not "
              "softmax's: autograd followed your function (its gradient is how your function's own values change "
              "near this input), so near this input your function changes otherwise than softmax does (flat where "
              "softmax is not, for instance)",
        "zh": "在这项检查的输入上，你的数值与 softmax 的相同，但传回输入的梯度不是 softmax 的梯度："
              "autograd 跟踪了你的函数（它的梯度就是你的函数自身的数值在这个输入附近的变化），所以在这个输入附近，"
              "你的函数的变化方式与 softmax 不同（例如在 softmax 并不平坦的地方它是平坦的）"},
    "function.gradient_own_slope_other": {
        "en": "the values are right, but the gradient that flows back to the input is not the one the notes' "
              "computation gives: autograd followed your function (its gradient is how your function's own values "
              "change near this input), so near this input your function changes otherwise than the notes' does "
              "(flat where theirs is not, for instance)",
        "zh": "数值是对的，但传回输入的梯度不是笔记中的计算应有的梯度：autograd 跟踪了你的函数（它的梯度就是你的函数"
              "自身的数值在这个输入附近的变化），所以在这个输入附近，你的函数的变化方式与笔记中的不同（例如在笔记的"
              "计算并不平坦的地方它是平坦的）"},
    "function.gradient_faked": {
        "en": "the values are a softmax, but the gradient flowing back to the input is not softmax's: some step was "
              "computed where autograd does not record (NumPy, a detached result, a block with gradients switched "
              "off, a constant put in place of a value computed from the input) and counts as a constant",
        "zh": "数值是 softmax，但传回输入的梯度不是 softmax 的梯度：某一步是在 autograd 不记录的地方计算的"
              "（NumPy、detach 后的结果、关闭了梯度计算的代码块、用常数代替了由输入算出的值），于是被当成了常数"},
    # A tensor a call was handed, read again after the call (probing.arguments_changes, judging.argument_changed):
    # each says what the learner's run did to it, its numbers counted.
    "argument.values_changed": {
        "en": "your {caller} changed the {argument} it was given: {differ} of its {size} entries differ after the "
              "call; the caller still needs it as it was, so leave it unchanged and compute into a new tensor",
        "zh": "你的 {caller} 修改了传给它的 {argument}：调用之后，它的 {size} 个元素中有 {differ} 个与调用之前不同；"
              "调用者之后还要用原来的它，所以请不要改动它，把结果算到一个新张量里"},
    "argument.reshaped": {
        "en": "your {caller} changed the {argument} it was given in place: its shape was {shape_before} before the "
              "call and is {shape_after} after it; leave it unchanged",
        "zh": "你的 {caller} 原地修改了传给它的 {argument}：调用之前它的形状是 {shape_before}，调用之后是 "
              "{shape_after}；请不要改动它"},
    "argument.layout_changed": {
        "en": "your {caller} changed the {argument} it was given in place: its shape is still {shape_after}, but its "
              "strides or its offset in memory changed; leave it unchanged",
        "zh": "你的 {caller} 原地修改了传给它的 {argument}：它的形状仍是 {shape_after}，但步长或在内存中的偏移变了；"
              "请不要改动它"},
    "argument.metadata_changed": {
        "en": "your {caller} changed the {argument} it was given in place: its class, dtype, device or requires_grad "
              "is not what it was before the call; leave it unchanged",
        "zh": "你的 {caller} 原地修改了传给它的 {argument}：它的类、dtype、设备或 requires_grad 与调用之前不同了；"
              "请不要改动它"},
    "argument.written": {
        "en": "your {caller} wrote into the {argument} it was given: its values are the same after the call, but an "
              "in-place operation wrote them; leave it unchanged",
        "zh": "你的 {caller} 写入了传给它的 {argument}：调用之后数值没有变，但有一个原地运算写入了它；请不要改动它"},
    # The same, of a tensor the argument holds ({part}: the mha's out_proj.weight).
    "argument.part_values_changed": {
        "en": "your {caller} changed the {argument} it was given: {differ} of the {size} entries of its {part} differ "
              "after the call; the caller still needs it as it was, so leave it unchanged and compute into a new "
              "tensor",
        "zh": "你的 {caller} 修改了传给它的 {argument}：调用之后，它的 {part} 的 {size} 个元素中有 {differ} 个与调用"
              "之前不同；调用者之后还要用原来的它，所以请不要改动它，把结果算到一个新张量里"},
    "argument.part_reshaped": {
        "en": "your {caller} changed the {argument} it was given in place: the shape of its {part} was {shape_before} "
              "before the call and is {shape_after} after it; leave it unchanged",
        "zh": "你的 {caller} 原地修改了传给它的 {argument}：调用之前它的 {part} 的形状是 {shape_before}，调用之后是 "
              "{shape_after}；请不要改动它"},
    "argument.part_layout_changed": {
        "en": "your {caller} changed the {argument} it was given in place: its {part} still has shape {shape_after}, "
              "but its strides or its offset in memory changed; leave it unchanged",
        "zh": "你的 {caller} 原地修改了传给它的 {argument}：它的 {part} 的形状仍是 {shape_after}，但步长或在内存中的"
              "偏移变了；请不要改动它"},
    "argument.part_metadata_changed": {
        "en": "your {caller} changed the {argument} it was given in place: the class, dtype, device or requires_grad "
              "of its {part} is not what it was before the call; leave it unchanged",
        "zh": "你的 {caller} 原地修改了传给它的 {argument}：它的 {part} 的类、dtype、设备或 requires_grad 与调用之前"
              "不同了；请不要改动它"},
    "argument.part_written": {
        "en": "your {caller} wrote into the {argument} it was given: the values of its {part} are the same after the "
              "call, but an in-place operation wrote them; leave it unchanged",
        "zh": "你的 {caller} 写入了传给它的 {argument}：调用之后它的 {part} 的数值没有变，但有一个原地运算写入了它；"
              "请不要改动它"},
    # Parameters or buffers a call added to, or took from, a module it was handed (to_torch_multihead's mha).
    "argument.part_added": {
        "en": "your {caller} changed the {argument} it was given: it now holds a new parameter {part} that it "
              "did not have before the call (new parameters or buffers in all: {count}); {argument} is only "
              "read, so leave its parameters as they were and put what the copy needs (zeros for a missing bias) "
              "into the new module alone",
        "zh": "你的 {caller} 修改了传给它的 {argument}：调用之后它多了一个调用之前没有的参数 {part}（一共多了 {count} "
              "个参数或 buffer）；{argument} 只能读取，所以请保持它的参数不变，把复制所需的东西（缺少的偏置用零代替）"
              "只放进新的模块里"},
    "argument.part_added_unnamed": {
        "en": "your {caller} changed the {argument} it was given: it now holds {count} parameters or buffers that it "
              "did not have before the call; {argument} is only read, so leave its parameters as they were and put "
              "what the copy needs into the new module alone",
        "zh": "你的 {caller} 修改了传给它的 {argument}：调用之后它多了 {count} 个调用之前没有的参数或 buffer；"
              "{argument} 只能读取，所以请保持它的参数不变，把复制所需的东西只放进新的模块里"},
    "argument.part_removed": {
        "en": "your {caller} changed the {argument} it was given: its parameter {part} is gone after the call "
              "(parameters or buffers gone in all: {count}); {argument} is only read, so leave its parameters as "
              "they were",
        "zh": "你的 {caller} 修改了传给它的 {argument}：调用之后它的参数 {part} 不见了（一共少了 {count} 个参数或 "
              "buffer）；{argument} 只能读取，所以请保持它的参数不变"},
    "argument.part_removed_unnamed": {
        "en": "your {caller} changed the {argument} it was given: {count} of its parameters or buffers are gone after "
              "the call; {argument} is only read, so leave its parameters as they were",
        "zh": "你的 {caller} 修改了传给它的 {argument}：调用之后它少了 {count} 个参数或 buffer；{argument} 只能读取，"
              "所以请保持它的参数不变"},
    "shape.wrong": {
        "en": "output shape {got_shape}, expected {expected_shape}",
        "zh": "输出形状为 {got_shape}，期望 {expected_shape}",
    },
    "shape.same_numbers": {
        "en": "the numbers are right, but the output has shape {got_shape}, not {expected_shape}: the same values in "
              "the same order, in another shape",
        "zh": "数值是对的，但输出形状是 {got_shape}，而不是 {expected_shape}：数值相同、顺序也相同，只是形状不同"},
    "shape.same_numbers_regrouped": {
        "en": "the numbers are right, but the output has shape {got_shape}, not {expected_shape}: the same values in "
              "the same order, in another shape. The operations your code ran include {names}: which shape does "
              "each of them leave?",
        "zh": "数值是对的，但输出形状是 {got_shape}，而不是 {expected_shape}：数值相同、顺序也相同，只是形状不同。"
              "你的代码运行的操作中有 {names}：它们各自留下的是什么形状？"},
    "shape.same_numbers_regrouped.hidden": {
        "en": "the numbers are right, but the output has another shape: the same values in the same order. The "
              "operations your code ran include {names}: which shape does each of them leave?",
        "zh": "数值是对的，但输出的形状不对：数值相同、顺序也相同，只是形状不同。你的代码运行的操作中有 {names}："
              "它们各自留下的是什么形状？"},
    "shape.same_numbers.hidden": {
        "en": "the numbers are right, but the output has another shape: the same values in the same order",
        "zh": "数值是对的，但输出的形状不对：数值相同、顺序也相同，只是形状不同"},
    "shape.wrong.hidden": {
        "en": "the output has the wrong shape",
        "zh": "输出形状不对",
    },
    "error.leaf_in_place": {
        "en": "a parameter was overwritten in place while autograd was recording ({type}: {detail})",
        "zh": "在 autograd 记录期间原地覆盖了一个参数（{type}：{detail}）"},
    "error.matmul_shapes": {
        "en": "the matrix product in `{line}` multiplies {left} by {right}: the inner sizes must be equal",
        "zh": "`{line}` 中的矩阵乘法把 {left} 乘以 {right}：中间的两个尺寸必须相等"},
    "error.broadcast_axis": {
        "en": "in `{line}` two tensors disagree on axis {axis}: {a} against {b}; print both shapes just before it",
        "zh": "`{line}` 中两个张量在第 {axis} 个维度上不一致：{a} 对 {b}；请在这一行之前打印两者的形状"},
    "error.view_size": {
        "en": "`{line}` asks for shape {shape}, but the tensor holds {size} numbers: one of the sizes in it is not "
              "the tensor's",
        "zh": "`{line}` 要求形状 {shape}，但张量共有 {size} 个数：其中某个尺寸与张量本身的不一致"},
    "error.axis_out_of_range": {
        "en": "`{line}` asks for axis {axis} of a {rank}-D tensor",
        "zh": "`{line}` 要访问一个 {rank} 维张量的第 {axis} 个维度"},
    "error.axis_out_of_range_at_most_one": {
        "en": "`{line}` asks for axis {axis} of a tensor with one axis or none (1-D or 0-D)",
        "zh": "`{line}` 要访问第 {axis} 个维度，但这个张量最多只有一个维度（1 维或 0 维）"},
    "error.transpose_4d": {
        "en": "`{line}` swaps axes 1 and 2, but these tensors have four axes (batch, heads, tokens, head size): "
              "the product is then asked to multiply the wrong axes together (whether or not their sizes allow "
              "it)",
        "zh": "`{line}` 交换了第 1 和第 2 个维度，但这些张量有四个维度（batch、头、token、每个头的大小）："
              "于是乘法被要求把错误的维度相乘（无论它们的大小是否允许）",
    },
    "error.argument_type": {
        "en": "in `{line}` a function refused one of its arguments ({type}: {detail}): what is the type of each "
              "value you pass it?",
        "zh": "`{line}` 中的函数拒绝了它的某个参数（{type}：{detail}）：你传给它的每个值分别是什么类型？",
    },
    "error.other": {
        "en": "raised {type}: {detail}",
        "zh": "抛出了 {type}：{detail}",
    },
}
