(size($typed.types) = 0 OR any(l IN labels(n) WHERE l IN $typed.types))
AND all(a IN $typed.attributes WHERE n[a.name] IN a.values)
