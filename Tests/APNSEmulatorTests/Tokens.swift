/// Well-formed device tokens for the tests.
let tokenA = String(repeating: "ab", count: 32)
let tokenB = String(repeating: "cd", count: 32)
let tokenC = String(repeating: "ef", count: 32)
